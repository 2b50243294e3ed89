// Fuzz target: the measured-CSV reader (validate, reproduce, calibrate) fed a user's file. Bad
// input must end in tb::InputError naming file:line, never in a crash or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/measured_csv.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    auto cells = tb::scenario::parse_measured_csv(text, "fuzz.csv");
    // The same file as its own summaries: the pairing `reproduce` does with the published ones.
    tb::scenario::attach_summaries(cells, tb::scenario::parse_measured_csv(text, "fuzz.csv"));
  } catch (const tb::InputError&) {
  }
  return 0;
}
