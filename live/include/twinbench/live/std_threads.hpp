#pragma once
// tb::Threads as real std::threads, for the threaded client models in live runs.
#include <memory>

#include "twinbench/clientcore/threads.hpp"

namespace tb::live {

class StdThreads final : public Threads {
 public:
  // The worker loops `while (!iteration()) sleep_for(sleep)`; a zero sleep yields instead.
  std::unique_ptr<Worker> start(std::function<bool()> iteration, Duration sleep) override;
};

}  // namespace tb::live
