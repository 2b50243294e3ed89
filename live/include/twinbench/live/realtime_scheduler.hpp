#pragma once
// tb::Scheduler on the real steady clock, driven by the main (frame-loop) thread.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "twinbench/clientcore/scheduler.hpp"
#include "twinbench/live/wakeup_lateness.hpp"

namespace tb::live {

class RealtimeScheduler final : public Scheduler {
 public:
  // Each sleep until a timed event is recorded in `lateness` (when given, it outlives this).
  explicit RealtimeScheduler(WakeupLateness* lateness = nullptr);

  Time now() const override;  // steady_clock time since construction
  // Main thread only (the thread calling run_until).
  void schedule_at(Time at, std::function<void()> fn) override;

  // Any thread: runs `fn` on the main thread as soon as possible, waking a sleeping run_until.
  void post(std::function<void()> fn);

  // Runs posted and due events, sleeping until the next deadline, until done() is true (returns
  // true) or `timeout` has passed (returns false). done() is checked after every event.
  bool run_until(const std::function<bool()>& done, Duration timeout);

  std::size_t pending() const { return events_.size(); }  // timed events not yet run

 private:
  struct Event {
    Time at;
    std::uint64_t seq;  // insertion order breaks ties
    std::function<void()> fn;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };

  std::chrono::steady_clock::time_point epoch_;
  WakeupLateness* lateness_;
  std::vector<Event> events_;  // a heap ordered by Later: earliest, then first scheduled
  std::uint64_t next_seq_ = 0;

  std::mutex posted_mutex_;
  std::condition_variable wake_;
  std::vector<std::function<void()>> posted_;
};

}  // namespace tb::live
