#pragma once
// The clock/scheduler seam. The live backend maps it onto a real-time timer loop, the simulated
// backend onto ns3::Simulator, tests onto VirtualScheduler.
#include <functional>

#include "twinbench/clientcore/time.hpp"

namespace tb {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual Time now() const = 0;
  // Runs `fn` at `at` (immediately after the current event if `at` is in the past), on the thread
  // that drives the scheduler. Events at the same time run in the order they were scheduled.
  virtual void schedule_at(Time at, std::function<void()> fn) = 0;
  void schedule_in(Duration d, std::function<void()> fn) { schedule_at(now() + d, std::move(fn)); }
};

}  // namespace tb
