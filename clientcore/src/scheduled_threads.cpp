#include "twinbench/clientcore/scheduled_threads.hpp"

#include <algorithm>
#include <memory>

namespace tb {

namespace {

struct WorkerState {
  std::function<bool()> iteration;
  Duration sleep;
  bool alive = true;
};

class ScheduledWorker : public Worker {
 public:
  explicit ScheduledWorker(std::shared_ptr<WorkerState> state) : state_(std::move(state)) {}
  ~ScheduledWorker() override { state_->iteration = nullptr; }  // a dropped worker stops
  bool alive() const override { return state_->alive; }
  // A simulated worker cannot be waited for inside an event; joining one still running stops it
  // before its next iteration, which is what a quit flag plus a join amounts to.
  void join() override {
    state_->iteration = nullptr;
    state_->alive = false;
  }

 private:
  std::shared_ptr<WorkerState> state_;
};

void run_iteration(Scheduler& scheduler, const std::shared_ptr<WorkerState>& state) {
  if (!state->iteration || state->iteration()) {
    state->alive = false;
    return;
  }
  scheduler.schedule_in(state->sleep, [&scheduler, state] { run_iteration(scheduler, state); });
}

}  // namespace

ScheduledThreads::ScheduledThreads(Scheduler& scheduler, Duration min_sleep)
    : scheduler_(scheduler), min_sleep_(min_sleep) {}

std::unique_ptr<Worker> ScheduledThreads::start(std::function<bool()> iteration, Duration sleep) {
  auto state = std::make_shared<WorkerState>();
  state->iteration = std::move(iteration);
  state->sleep = std::max(sleep, min_sleep_);
  // The thread starts running concurrently with its creator, i.e. right after the current event.
  scheduler_.schedule_in(Duration{0}, [this, state] { run_iteration(scheduler_, state); });
  return std::make_unique<ScheduledWorker>(state);
}

}  // namespace tb
