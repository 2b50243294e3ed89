// SPDX-License-Identifier: GPL-2.0-only
// Faster stand-ins for functions of ns-3.37, one file per ns-3 class in this folder; this file holds
// what they share: the switch (TWINBENCH_NS3_FAST_PATHS), ns-3's own functions found with
// dlsym(RTLD_NEXT), and the check that ns-3's own callers reach each stand-in.
// They reimplement ns-3.37's functions, which are GPL-2.0-only (LICENSE).
// ns-3 calls each through the PLT, so these definitions, linked into every program that simulates,
// are the ones that run; tests/sim/ns3_fast_paths_test.cpp checks each against ns-3's own function,
// and results are byte-identical with and without them (tests/integration/ns3_fast_paths_cli_test.cpp).
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

#include "resolved.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <ns3/data-rate.h>
#include <ns3/global-value.h>
#include <ns3/nstime.h>
#include <ns3/mac48-address.h>
#include <ns3/node.h>
#include <ns3/object.h>
#include <ns3/rng-stream.h>
#include <ns3/tcp-option-rfc793.h>
#include <ns3/tcp-option-sack-permitted.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/tcp-option-ts.h>
#include <ns3/tcp-option-winscale.h>
#include <ns3/tcp-option.h>
#include <ns3/version-defines.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

// Only for the ns-3 whose functions these mirror (CMakeLists.txt asks for it exactly).
#if !(NS3_VERSION_MAJOR == 3 && NS3_VERSION_MINOR == 37)
#error "ns3_fast_paths/ mirrors ns-3.37's functions: build against ns-3 3.37"
#endif

namespace tb::ns3_fast_paths {
namespace {

// TWINBENCH_NS3_FAST_PATHS=0 runs ns-3's own functions throughout (results are the same; a check
// of that, or a way round a stand-in suspected of a fault); unset or 1, the stand-ins.
bool fast_paths_wanted() {
  const char* value = std::getenv("TWINBENCH_NS3_FAST_PATHS");
  if (value == nullptr || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  std::fprintf(stderr, "twinbench: TWINBENCH_NS3_FAST_PATHS=%s: expected 0 (off) or 1 (on)\n", value);
  std::exit(2);
}

std::atomic<bool> fast_paths_on{fast_paths_wanted()};

// The groups' names in TWINBENCH_NS3_FAST_PATHS_OFF, in Ns3FastPath order.
constexpr const char* kPathKeys[] = {"scoreboard",   "create-option",   "construct-self",
                                     "rng-stream",   "mac48-broadcast", "checksum-enabled",
                                     "bytes-tx-time"};

// TWINBENCH_NS3_FAST_PATHS_OFF=GROUP,...: those groups run ns-3's own functions, the others stay
// on (scripts/fast-path-gains.sh measures each group's gain that way).
std::array<bool, std::size(kPathKeys)> groups_wanted_off() {
  std::array<bool, std::size(kPathKeys)> off{};
  const char* value = std::getenv("TWINBENCH_NS3_FAST_PATHS_OFF");
  if (value == nullptr) return off;
  std::string list = value;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string key = list.substr(start, end - start);
    const auto* found = std::find_if(std::begin(kPathKeys), std::end(kPathKeys),
                                     [&](const char* k) { return key == k; });
    if (found == std::end(kPathKeys)) {
      std::string known;
      for (const char* k : kPathKeys) known += std::string(known.empty() ? "" : ", ") + k;
      std::fprintf(
          stderr, "twinbench: TWINBENCH_NS3_FAST_PATHS_OFF: expected groups among %s, got \"%s\"\n",
          known.c_str(), key.c_str());
      std::exit(2);
    }
    off[static_cast<std::size_t>(found - std::begin(kPathKeys))] = true;
    start = end + 1;
  }
  return off;
}

const std::array<bool, std::size(kPathKeys)> groups_off = groups_wanted_off();

// Each stand-in and the ns-3 library whose own code calls it (in ns-3.37's sources), through its
// PLT. A library linked with -Bsymbolic, or built with LTO or -fno-semantic-interposition, binds
// such calls directly: it then has no dynamic relocation for the symbol, and the stand-in would
// not be reached from inside it (for the scoreboard group, its remembered state would go stale).
struct Reach {
  Ns3FastPath path;
  const char* library;  // the start of its file name
  const char* symbol;
};

constexpr Reach kReaches[] = {
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kNextSegSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kUpdateSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kRetransmittedDataAckedSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kSetSentListLostSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kResetRenoSackSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kResetLastSegmentSentSymbol},
    {Ns3FastPath::kCreateOption, "libns3-internet.so", kCreateOptionSymbol},
    {Ns3FastPath::kConstructSelf, "libns3-core.so", kConstructSelfSymbol},
    {Ns3FastPath::kRngStream, "libns3-core.so", kRngStreamConstructorSymbol},
    {Ns3FastPath::kMac48Broadcast, "libns3-point-to-point.so", kMac48AddressFromTextSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-internet.so", kChecksumEnabledSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalBindSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalBindFailSafeSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalResetInitialValueSymbol},
    {Ns3FastPath::kBytesTxTime, "libns3-point-to-point.so", kCalculateBytesTxTimeSymbol},
    {Ns3FastPath::kBytesTxTime, "libns3-internet.so", kCalculateBytesTxTimeSymbol},
};

constexpr const char* kPathNames[] = {"TcpTxBuffer scoreboard", "TcpOption::CreateOption",
                                      "ObjectBase::ConstructSelf", "RngStream constructor",
                                      "Mac48Address broadcast", "Node::ChecksumEnabled",
                                      "DataRate::CalculateBytesTxTime"};

// The stand-ins ns-3's own callers do not reach (each library's relocations read once).
std::vector<const Reach*> unreached() {
  std::map<std::string, std::set<std::string>> relocated;
  std::vector<const Reach*> missing;
  for (const Reach& r : kReaches) {
    if (!relocated.count(r.library)) relocated[r.library] = ns3_relocated_symbols(r.library);
    if (!relocated[r.library].count(r.symbol)) missing.push_back(&r);
  }
  return missing;
}

std::string why_unreached(const Reach& r) {
  return std::string(kPathNames[static_cast<int>(r.path)]) + ": " + r.library +
         " has no relocation for " + r.symbol +
         " (its calls are bound directly: -Bsymbolic, LTO or -fno-semantic-interposition?)";
}

// Which groups of stand-ins ns-3's own callers reach, checked once per process: a group with a
// symbol they do not reach runs ns-3's own functions, with a warning.
const std::array<bool, std::size(kPathNames)>& reached() {
  static const auto groups = [] {
    std::array<bool, std::size(kPathNames)> ok;
    ok.fill(true);
    for (const Reach* r : unreached()) {
      ok[static_cast<int>(r->path)] = false;
      std::fprintf(stderr, "twinbench: an ns-3 fast path is off, ns-3's own function runs: %s\n",
                   why_unreached(*r).c_str());
    }
    return ok;
  }();
  return groups;
}

}  // namespace

void* ns3_library_symbol(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "twinbench: ns-3's %s not found: %s\n", name, dlerror());
    std::abort();
  }
  return symbol;
}

std::set<std::string> ns3_relocated_symbols(const std::string& library) {
  struct Search {
    const std::string& library;
    std::set<std::string> names;
  } search{library, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        const char* slash = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
        const std::string file = slash ? slash + 1 : (info->dlpi_name ? info->dlpi_name : "");
        if (!file.starts_with(s.library)) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
          // glibc has already added the load address to these in its copy of the section; an
          // address below the load address has not had it added.
          const auto at = [&](ElfW(Addr) a) { return a < info->dlpi_addr ? a + info->dlpi_addr : a; };
          const ElfW(Sym)* symbols = nullptr;
          const char* strings = nullptr;
          ElfW(Addr) plt = 0, rela = 0;
          std::size_t plt_size = 0, rela_size = 0;
          for (auto* d = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
               d->d_tag != DT_NULL; ++d) {
            switch (d->d_tag) {
              case DT_SYMTAB: symbols = reinterpret_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr)); break;
              case DT_STRTAB: strings = reinterpret_cast<const char*>(at(d->d_un.d_ptr)); break;
              case DT_JMPREL: plt = at(d->d_un.d_ptr); break;
              case DT_PLTRELSZ: plt_size = d->d_un.d_val; break;
              case DT_RELA: rela = at(d->d_un.d_ptr); break;
              case DT_RELASZ: rela_size = d->d_un.d_val; break;
              default: break;
            }
          }
          if (symbols == nullptr || strings == nullptr) continue;
          for (const auto& [start, size] : {std::pair{plt, plt_size}, std::pair{rela, rela_size}}) {
            const auto* r = reinterpret_cast<const ElfW(Rela)*>(start);
            for (std::size_t k = 0; start != 0 && k < size / sizeof(ElfW(Rela)); ++k)
              if (const auto sym = ELF64_R_SYM(r[k].r_info); sym != 0)
                s.names.insert(strings + symbols[sym].st_name);
          }
        }
        return 0;
      },
      &search);
  return search.names;
}

std::vector<std::string> ns3_fast_paths_unreached() {
  std::vector<std::string> reasons;
  for (const Reach* r : unreached()) reasons.push_back(why_unreached(*r));
  return reasons;
}

void set_ns3_fast_paths(bool on) { fast_paths_on.store(on, std::memory_order_relaxed); }
bool ns3_fast_paths_on() { return fast_paths_on.load(std::memory_order_relaxed); }
bool ns3_fast_path_on(Ns3FastPath path) {
  const auto group = static_cast<std::size_t>(path);
  return ns3_fast_paths_on() && !groups_off[group] && reached()[group];
}

NextSegFunction library_next_seg() { return resolved<NextSegFunction, kNextSegSymbol>(); }
UpdateFunction library_update() { return resolved<UpdateFunction, kUpdateSymbol>(); }
RetransmittedDataAckedFunction library_retransmitted_data_acked() {
  return resolved<RetransmittedDataAckedFunction, kRetransmittedDataAckedSymbol>();
}
CreateOptionFunction library_create_option() {
  return resolved<CreateOptionFunction, kCreateOptionSymbol>();
}
ConstructSelfFunction library_construct_self() {
  return resolved<ConstructSelfFunction, kConstructSelfSymbol>();
}
Mac48AddressFromText library_mac48_address_from_text() {
  return resolved<Mac48AddressFromText, kMac48AddressFromTextSymbol>();
}
CalculateBytesTxTimeFunction library_calculate_bytes_tx_time() {
  return resolved<CalculateBytesTxTimeFunction, kCalculateBytesTxTimeSymbol>();
}
ChecksumEnabledFunction library_checksum_enabled() {
  return resolved<ChecksumEnabledFunction, kChecksumEnabledSymbol>();
}
RngStreamConstructor library_rng_stream_constructor() {
  return resolved<RngStreamConstructor, kRngStreamConstructorSymbol>();
}

}  // namespace tb::ns3_fast_paths
