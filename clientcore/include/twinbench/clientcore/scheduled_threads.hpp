#pragma once
// Threaded models on simulated time: a worker is a chain of scheduler events, one per loop
// iteration, `sleep` apart. Used by the simulated backend and the tests; the live backend uses
// real threads instead.
#include "twinbench/clientcore/scheduler.hpp"
#include "twinbench/clientcore/threads.hpp"

namespace tb {

class ScheduledThreads : public Threads {
 public:
  // `min_sleep` stands for the OS: a sleep never lasts less than the timer allows, and a zero
  // sleep on virtual time would spin forever without time passing.
  ScheduledThreads(Scheduler& scheduler, Duration min_sleep = Duration{1000});
  std::unique_ptr<Worker> start(std::function<bool()> iteration, Duration sleep) override;

 private:
  Scheduler& scheduler_;
  Duration min_sleep_;
};

}  // namespace tb
