#pragma once
// The worker-thread seam for threaded client models. A worker repeats `iteration` until it
// returns true, sleeping `sleep` between iterations (Godot's OS.delay_usec). Live: a std::thread;
// simulated and tests: events on the Scheduler, so the sleep becomes simulated time.
#include <functional>
#include <memory>

#include "twinbench/clientcore/time.hpp"

namespace tb {

class Worker {
 public:
  virtual ~Worker() = default;
  virtual bool alive() const = 0;  // Godot's Thread.is_alive()
  virtual void join() = 0;         // Thread.wait_to_finish(); call only once alive() is false
};

class Threads {
 public:
  virtual ~Threads() = default;
  virtual std::unique_ptr<Worker> start(std::function<bool()> iteration, Duration sleep) = 0;
};

}  // namespace tb
