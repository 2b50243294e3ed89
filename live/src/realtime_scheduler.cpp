#include "twinbench/live/realtime_scheduler.hpp"

#include <algorithm>

namespace tb::live {

RealtimeScheduler::RealtimeScheduler(WakeupLateness* lateness)
    : epoch_(std::chrono::steady_clock::now()), lateness_(lateness) {}

Time RealtimeScheduler::now() const {
  return std::chrono::duration_cast<Time>(std::chrono::steady_clock::now() - epoch_);
}

void RealtimeScheduler::schedule_at(Time at, std::function<void()> fn) {
  events_.push_back(Event{at, next_seq_++, std::move(fn)});
  std::push_heap(events_.begin(), events_.end(), Later{});
}

void RealtimeScheduler::post(std::function<void()> fn) {
  {
    std::lock_guard lock(posted_mutex_);
    posted_.push_back(std::move(fn));
  }
  wake_.notify_one();
}

bool RealtimeScheduler::run_until(const std::function<bool()>& done, Duration timeout) {
  const Time deadline = now() + timeout;
  for (;;) {
    if (done()) return true;
    std::vector<std::function<void()>> posted;
    {
      std::lock_guard lock(posted_mutex_);
      posted.swap(posted_);
    }
    for (std::size_t i = 0; i < posted.size(); ++i) {
      posted[i]();
      if (done()) {  // keep the rest, in order, for the next run_until
        std::lock_guard lock(posted_mutex_);
        posted_.insert(posted_.begin(),
                       std::make_move_iterator(posted.begin() + static_cast<std::ptrdiff_t>(i) + 1),
                       std::make_move_iterator(posted.end()));
        return true;
      }
    }
    // Due timed events, including any an event schedules in the past (they run right after it).
    while (!events_.empty() && events_.front().at <= now()) {
      std::pop_heap(events_.begin(), events_.end(), Later{});
      auto fn = std::move(events_.back().fn);
      events_.pop_back();
      fn();
      if (done()) return true;
    }
    const Time t = now();
    if (t >= deadline) return false;
    const Time wake_at = events_.empty() ? deadline : std::min(deadline, events_.front().at);
    if (wake_at <= t) continue;
    std::unique_lock lock(posted_mutex_);
    // Sleeps until the next deadline unless another thread posts work first.
    const bool woken_by_post =
        wake_.wait_until(lock, epoch_ + wake_at, [this] { return !posted_.empty(); });
    if (!woken_by_post && lateness_ != nullptr && wake_at < deadline)  // woke for a timed event
      lateness_->record(now() - wake_at);
  }
}

}  // namespace tb::live
