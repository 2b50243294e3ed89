#pragma once
// Time as the client core sees it: nanoseconds since the backend's epoch. The core never reads a
// clock of its own; a Scheduler gives it "now".
#include <chrono>
#include <cstdint>

namespace tb {

using Duration = std::chrono::nanoseconds;
using Time = std::chrono::nanoseconds;  // since the scheduler's epoch

constexpr double to_ms(Duration d) { return static_cast<double>(d.count()) / 1e6; }
constexpr Duration from_ms(double ms) { return Duration(static_cast<std::int64_t>(ms * 1e6)); }

}  // namespace tb
