#pragma once
// Measured cells from a CSV file: the reference format of the published run and of twinbench's own
// results.csv, for `validate`, `reproduce` and `calibrate`.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinbench/scenario/stats.hpp"

namespace tb::scenario {

// One measured cell. Read from the reference CSV format: '#' comment lines, then a header naming
// at least scenario,fps,body_bytes,variant,median_ms; min_ms,q1_ms,q3_ms,max_ms are used when
// present (lightsail-published-summary.csv, twinbench's own results.csv).
struct MeasuredCell {
  std::string scenario;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  std::string variant;
  double median_ms = 0;
  std::optional<Summary> summary;  // min, q1, median, q3, max when the file has them
  std::string origin;              // "file:line", for messages
};

// Throws InputError naming file:line and the column for anything malformed.
std::vector<MeasuredCell> parse_measured_csv(std::string_view text, const std::string& origin);
std::vector<MeasuredCell> load_measured_csv(const std::string& path);
// Adds the five-number summaries of `summaries` to the cells of `medians` (same keys).
void attach_summaries(std::vector<MeasuredCell>& medians,
                      const std::vector<MeasuredCell>& summaries);

}  // namespace tb::scenario
