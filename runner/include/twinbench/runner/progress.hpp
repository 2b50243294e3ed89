#pragma once
// The one progress reporter of every long command (run, reproduce, calibrate, sweep, compare): a
// line on stderr with a bar, the steps done, the elapsed time and an ETA. On a terminal it is
// rewritten in place at every step; otherwise (CI logs) a line is written at each tenth of the job
// and at least every 30 s, so a log shows progress without thousands of lines.
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace tb::runner {

class ProgressLine {
 public:
  // `steps` names the steps ("samples", "points"); `enabled` false makes every update a no-op.
  explicit ProgressLine(std::string steps, bool enabled = true);
  // `detail` follows the counts (for example the step just finished).
  void update(std::size_t done, std::size_t total, std::string_view detail = {});

 private:
  std::string steps_;
  bool enabled_;
  bool tty_;
  int last_tenth_ = -1;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_line_ = start_;
};

// "42s", "3m05s", "1h02m".
std::string duration_text(double seconds);

}  // namespace tb::runner
