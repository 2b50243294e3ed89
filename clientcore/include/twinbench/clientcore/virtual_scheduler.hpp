#pragma once
// A deterministic discrete-event scheduler on virtual time: the manual clock of the tests, and the
// reference for what the ns-3 adapter must do. Nothing here reads a real clock.
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "twinbench/clientcore/scheduler.hpp"

namespace tb {

class VirtualScheduler : public Scheduler {
 public:
  Time now() const override { return now_; }
  void schedule_at(Time at, std::function<void()> fn) override;
  // Runs the next event; false when none is left.
  bool step();
  // Runs events until `done()` holds (checked after each event), the queue empties, or virtual
  // time would pass `deadline`. Returns done().
  bool run_until(const std::function<bool()>& done, Time deadline);
  std::size_t pending() const { return queue_.size(); }

 private:
  struct Event {
    Time at;
    std::uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  Time now_{0};
  std::uint64_t next_seq_ = 0;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
};

}  // namespace tb
