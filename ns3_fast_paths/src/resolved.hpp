#pragma once
// ns-3's own definitions of the functions the stand-ins replace, found once with
// dlsym(RTLD_NEXT) (control.cpp); a missing one aborts, naming it.

namespace tb::ns3_fast_paths {

void* ns3_library_symbol(const char* name);

// ns-3's own definition of `Symbol` as a `Function`, looked up once.
template <typename Function, const char* const& Symbol>
Function resolved() {
  static const auto function = reinterpret_cast<Function>(ns3_library_symbol(Symbol));
  return function;
}

}  // namespace tb::ns3_fast_paths
