#pragma once
// The clock/scheduler seam over ns3::Simulator, and the scope of one simulation in a process.
#include <cstdint>
#include <functional>

#include "twinbench/clientcore/scheduler.hpp"

namespace tb::sim {

// One simulation: fixes the RNG seed and run at construction and destroys the simulator (events,
// nodes, time) at destruction, so simulations can run one after another in one process with the
// same results. Only one may exist at a time; everything simulated must be destroyed before it.
class SimulationScope {
 public:
  explicit SimulationScope(std::uint64_t seed);
  ~SimulationScope();
  SimulationScope(const SimulationScope&) = delete;
  SimulationScope& operator=(const SimulationScope&) = delete;
};

// ns-3 events executed by the simulations of this process that have ended (their scopes
// destroyed): what the benchmarks divide by, to show the cost per event beside the cost per byte.
std::uint64_t events_executed_in_process();

// Simulated time is ns-3's (nanoseconds since the start of the simulation). Events at the same
// time run in the order they were scheduled, as ns-3 runs them.
class NsScheduler : public tb::Scheduler {
 public:
  Time now() const override;
  void schedule_at(Time at, std::function<void()> fn) override;

  // Runs the simulation until done() holds or simulated time reaches now + timeout; returns done().
  // done() is checked after every event of this scheduler and, unless `poll` is zero, every `poll`
  // of simulated time (for conditions that only network events change), so the simulation may run
  // up to `poll` past the moment a network-only condition became true. Zero: done() changes only
  // in this scheduler's events, or the caller stops the simulator itself when it holds.
  bool run_until(const std::function<bool()>& done, tb::Duration timeout,
                 tb::Duration poll = std::chrono::milliseconds(1));

 private:
  void check_done();

  const std::function<bool()>* done_ = nullptr;  // set while run_until runs
};

}  // namespace tb::sim
