#pragma once
// How late the live client's own timed wake-ups came: the frame loop's sleeps until its next
// event and the worker threads' sleeps between iterations. The model assumes a thread wakes when
// it asked to; on a machine busy with other work it wakes late, and a frame count moves for a
// reason the model does not claim to cover. A run states this figure so that a comparison with
// the simulation can tell a disturbed run from a model that is wrong (docs/emulated-path.md).
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace tb::live {

struct WakeupSummary {
  std::uint64_t wakeups = 0;
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

// Lock-free: any thread records, as often as a worker that sleeps 1 us between iterations
// (HTTPRequest's) wakes. Lateness is kept in 1 us bins, so quantiles are whole microseconds
// (rounded down) up to 0.1 s; a quantile beyond that is given as the maximum (exact itself), an
// upper bound. summary() is exact once recording has stopped; while threads record, it is a
// snapshot of the bins.
class WakeupLateness {
 public:
  static constexpr std::size_t kBins = 100'000;  // 0.1 s

  void record(std::chrono::nanoseconds late);
  WakeupSummary summary() const;

 private:
  std::array<std::atomic<std::uint64_t>, kBins> bins_{};
  std::atomic<std::int64_t> max_ns_{0};
};

}  // namespace tb::live
