#include "twinbench/live/wakeup_lateness.hpp"

#include <algorithm>
#include <cmath>

#include "twinbench/scenario/stats.hpp"

namespace tb::live {

void WakeupLateness::record(std::chrono::nanoseconds late) {
  const std::int64_t ns = std::max<std::int64_t>(0, late.count());
  const auto bin = std::min<std::uint64_t>(static_cast<std::uint64_t>(ns / 1000), kBins - 1);
  bins_[bin].fetch_add(1, std::memory_order_relaxed);
  std::int64_t seen = max_ns_.load(std::memory_order_relaxed);
  while (ns > seen && !max_ns_.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
  }
}

WakeupSummary WakeupLateness::summary() const {
  WakeupSummary s;
  for (const auto& bin : bins_) s.wakeups += bin.load(std::memory_order_relaxed);
  s.max_us = static_cast<double>(max_ns_.load(std::memory_order_relaxed)) / 1e3;
  if (s.wakeups == 0) return s;
  // The i-th smallest wake-up (from 0) is the bin that holds it, as a whole number of
  // microseconds; the last bin only says "at least", so the maximum stands for it there (never
  // an understatement). Its quantile is twinbench's one (scenario/stats.hpp).
  auto ranked = [&](std::size_t i) {
    std::uint64_t seen = 0;
    for (std::size_t bin = 0; bin + 1 < kBins; ++bin) {
      seen += bins_[bin].load(std::memory_order_relaxed);
      if (seen > i) return std::min(static_cast<double>(bin), s.max_us);
    }
    return s.max_us;
  };
  auto quantile = [&](double q) { return scenario::quantile(s.wakeups, q, ranked); };
  s.p50_us = quantile(0.5);
  s.p99_us = quantile(0.99);
  return s;
}

}  // namespace tb::live
