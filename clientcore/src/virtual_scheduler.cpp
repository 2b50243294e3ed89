#include "twinbench/clientcore/virtual_scheduler.hpp"

#include <algorithm>

namespace tb {

void VirtualScheduler::schedule_at(Time at, std::function<void()> fn) {
  queue_.push(Event{std::max(at, now_), next_seq_++, std::move(fn)});
}

bool VirtualScheduler::step() {
  if (queue_.empty()) return false;
  Event e = queue_.top();
  queue_.pop();
  now_ = e.at;
  e.fn();
  return true;
}

bool VirtualScheduler::run_until(const std::function<bool()>& done, Time deadline) {
  while (!done()) {
    if (queue_.empty() || queue_.top().at > deadline) return false;
    step();
  }
  return true;
}

}  // namespace tb
