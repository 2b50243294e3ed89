#pragma once
// Tests that compare real-time runs (a live frame loop, kernel TCP through the emulated path) with
// the model measure the machine as well as the code: on a machine busy with other work a sleeping
// thread wakes milliseconds late, a frame starts late, and a frame count moves for reasons the
// model does not claim to cover. Each attempt is judged by the run's own timing report (the
// client's wake-ups, the link emulator's packet lateness; docs/emulated-path.md, Validity), never
// by a probe of the test's own, which would compete with the run for the two cores and measure its
// own load. A disturbed attempt is repeated; a test none of whose attempts was valid cannot
// judge: under CI that is a failure printing what was measured (a regression must not turn into
// a skip on a loaded CI machine), elsewhere a skip with the same text.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

namespace tb::testing {

// CI sets the CI environment variable (.ci/run exports it): there every test must judge.
inline bool under_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && *ci != '\0' && std::string(ci) != "0" && std::string(ci) != "false";
}

}  // namespace tb::testing

// A test that cannot judge here (a busy machine, a missing capability or library feature):
// under CI a failure, elsewhere a skip, either way saying why and what was measured.
#define TB_CANNOT_JUDGE(why)                                                        \
  do {                                                                              \
    const std::string tb_cannot_judge_why = (why);                                  \
    if (::tb::testing::under_ci()) FAIL() << "cannot judge (CI): " << tb_cannot_judge_why; \
    GTEST_SKIP() << tb_cannot_judge_why;                                            \
  } while (0)

namespace tb::testing {

// A real-time run's own account of its timing.
struct RunTiming {
  double p99_us = 0;    // the run's p99 lateness (wake-ups or packets, whichever it reports)
  double max_us = 0;    // its latest single wake-up or packet
  double limit_us = 0;  // the p99 it must keep to be valid
  std::string what;     // "client wake-ups", "packets", ...
  std::string invalid_reason;  // set by the run itself (the emulated path's report), if any

  bool valid() const { return invalid_reason.empty() && p99_us <= limit_us; }
  std::string account() const {
    if (!invalid_reason.empty()) return invalid_reason;
    return fmt::format("{} p99 {:.0f} us (limit {:.0f}), max {:.0f} us", what, p99_us, limit_us,
                       max_us);
  }
};

// The client's own wake-ups in a live run: a quiet machine's floor, 3 % of a 60 fps frame and
// 1.25 % of a 40 ms round trip (the emulated path's wakeup_limit_us floor, docs/emulated-path.md).
inline constexpr double kWakeupLimitUs = 500;

// Attempts at a real-time comparison before it gives up on the machine: 3, or 6 under CI.
inline int real_time_attempts() { return under_ci() ? 6 : 3; }

// The longest single stall from which a result that `holds` is still taken (below).
inline constexpr double kLongestStallForHoldsUs = 20'000;

// Runs `run` up to real_time_attempts() times until an attempt's own timing is valid; `run`
// returns std::pair<Result, RunTiming>. Returns that result, or nullopt with `why` giving every
// attempt's account. `holds`, if given, is the test's claim on a result: a result for which it
// holds is taken from an invalid attempt too, if no single wake-up or packet was later than
// kLongestStallForHoldsUs, for a claim that lateness can only break, or could make hold only by
// delays far longer than that.
template <typename Run, typename Holds = std::nullptr_t>
auto first_valid_attempt(Run&& run, std::string& why, Holds holds = nullptr)
    -> std::optional<typename std::invoke_result_t<Run&>::first_type> {
  why.clear();
  const int attempts = real_time_attempts();
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    auto [result, timing] = run();
    if (timing.valid()) return std::move(result);
    if constexpr (!std::is_null_pointer_v<Holds>) {
      if (holds(result) && timing.max_us <= kLongestStallForHoldsUs) return std::move(result);
    }
    why += fmt::format("{}attempt {}: {}", why.empty() ? "" : "; ", attempt, timing.account());
  }
  why = fmt::format("no attempt of {} ran with valid timing (the machine was too busy for a "
                    "real-time comparison): {}",
                    attempts, why);
  return std::nullopt;
}

}  // namespace tb::testing
