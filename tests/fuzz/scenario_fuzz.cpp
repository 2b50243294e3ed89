// Fuzz target: the scenario and profile textproto loader fed a user's file. The text is loaded as
// a scenario (parse, defaults, validation), and as a profile laid over a valid scenario that is
// then validated, as `run --profile` does. Bad input must end in tb::InputError (exit 2 in the
// command line), never in a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/profile.hpp"

namespace {

// The published latency scenario (valid, with variants), loaded once; outside the try below, so a
// base that fails to load stops the fuzzer instead of making every input an early error.
const twinbench::Scenario& base_scenario() {
  static const twinbench::Scenario s =
      tb::scenario::load_scenario(TWINBENCH_SOURCE_DIR "/scenarios/published/latency.textproto");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const twinbench::Scenario& base = base_scenario();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    tb::scenario::parse_scenario(text, "fuzz.textproto");
  } catch (const tb::InputError&) {
  }
  try {
    twinbench::Scenario s = base;
    tb::scenario::apply_profile(s, tb::scenario::parse_profile(text, "profile.textproto"));
    tb::scenario::validate_scenario(s, "fuzz.textproto");
  } catch (const tb::InputError&) {
  }
  return 0;
}
