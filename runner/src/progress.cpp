#include "twinbench/runner/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

namespace tb::runner {

std::string duration_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

ProgressLine::ProgressLine(std::string steps, bool enabled)
    : steps_(std::move(steps)), enabled_(enabled), tty_(enabled && isatty(STDERR_FILENO) == 1) {}

void ProgressLine::update(std::size_t done, std::size_t total, std::string_view detail) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const std::size_t whole = std::max<std::size_t>(total, 1);
  const int tenth = static_cast<int>(10 * done / whole);
  const bool finished = done >= total;
  if (!tty_ && tenth == last_tenth_ && !finished && now - last_line_ < std::chrono::seconds(30))
    return;
  last_tenth_ = tenth;
  last_line_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const std::size_t width = 20, filled = width * std::min(done, whole) / whole;
  const std::string eta = finished    ? "done"
                          : done == 0 ? "ETA ?"
                                      : "ETA " + duration_text(elapsed / static_cast<double>(done) *
                                                               static_cast<double>(total - done));
  std::cerr << fmt::format("{}[{}{}] {}/{} {}, {} elapsed, {}{}{}{}", tty_ ? "\r\033[K" : "",
                           std::string(filled, '#'), std::string(width - filled, '.'), done, total,
                           steps_, duration_text(elapsed), eta, detail.empty() ? "" : ": ", detail,
                           tty_ && !finished ? "" : "\n");
}

}  // namespace tb::runner
