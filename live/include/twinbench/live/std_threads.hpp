#pragma once
// tb::Threads as real std::threads, for the threaded client models in live runs.
#include <memory>

#include "twinbench/clientcore/threads.hpp"
#include "twinbench/live/wakeup_lateness.hpp"

namespace tb::live {

class StdThreads final : public Threads {
 public:
  // Each worker's sleeps are recorded in `lateness` (when given, it outlives the workers).
  explicit StdThreads(WakeupLateness* lateness = nullptr) : lateness_(lateness) {}

  // The worker loops `while (!iteration()) sleep_for(sleep)`; a zero sleep yields instead.
  std::unique_ptr<Worker> start(std::function<bool()> iteration, Duration sleep) override;

 private:
  WakeupLateness* lateness_;
};

}  // namespace tb::live
