#include "twinbench/clientcore/frame_loop.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tb {

namespace {
// A flush that keeps producing work would hang the frame; Godot's queue is bounded too.
constexpr int kMaxFlushRounds = 1'000'000;
}  // namespace

FrameLoop::FrameLoop(Scheduler& scheduler, FrameLoopConfig config)
    : scheduler_(scheduler), config_(config) {}

void FrameLoop::start() {
  if (running_) return;
  running_ = true;
  target_ = scheduler_.now();
  const auto generation = ++generation_;
  scheduler_.schedule_in(Duration{0}, [this, generation] {
    if (generation == generation_) run_frame();
  });
}

void FrameLoop::stop() {
  running_ = false;
  ++generation_;
}

void FrameLoop::await_process_frame(std::function<void()> resume) {
  awaiting_.push_back(std::move(resume));
}

void FrameLoop::call_deferred(std::function<void()> fn) {
  std::lock_guard lock(deferred_mutex_);
  deferred_.push_back(std::move(fn));
}

FrameLoop::ProcessId FrameLoop::add_internal_process(std::function<void()> process) {
  processes_.push_back(Process{next_process_id_, std::move(process)});
  return next_process_id_++;
}

void FrameLoop::remove_internal_process(ProcessId id) {
  std::erase_if(processes_, [id](const Process& p) { return p.id == id; });
}

bool FrameLoop::ahead(std::uint64_t frame, FramePhase phase) const {
  // Between frames, frame_ is over: all of its phases are past.
  const FramePhase now = phase_ == FramePhase::kBetweenFrames ? FramePhase::kLastFlush : phase_;
  return phase != FramePhase::kBetweenFrames && std::pair(frame, phase) > std::pair(frame_, now);
}

void FrameLoop::at(std::uint64_t frame, FramePhase phase, std::function<void()> fn) {
  if (!ahead(frame, phase)) {
    throw std::logic_error("FrameLoop::at: frame " + std::to_string(frame) + " phase " +
                           std::to_string(static_cast<int>(phase)) + " is not ahead");
  }
  scheduled_.emplace(std::pair(frame, phase), std::move(fn));
}

void FrameLoop::enter(FramePhase phase) {
  phase_ = phase;
  // Entries added while these run are for later moments (at() refuses the present one).
  const auto [first, last] = scheduled_.equal_range(std::pair(frame_, phase));
  std::vector<std::function<void()>> due;
  for (auto it = first; it != last; ++it) due.push_back(std::move(it->second));
  scheduled_.erase(first, last);
  for (auto& fn : due) fn();
}

void FrameLoop::flush_message_queue() {
  for (int round = 0; round < kMaxFlushRounds; ++round) {
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard lock(deferred_mutex_);
      batch.swap(deferred_);
    }
    if (batch.empty()) return;
    for (auto& fn : batch) fn();
  }
  throw std::runtime_error("message queue keeps refilling itself");
}

void FrameLoop::run_frame() {
  const Time frame_start = scheduler_.now();
  ++frame_;

  std::vector<std::function<void()>> resuming;
  resuming.swap(awaiting_);  // awaits made while resuming wait for the next frame
  phase_ = FramePhase::kProcessFrame;
  for (auto& fn : resuming) fn();
  enter(FramePhase::kProcessFrame);
  enter(FramePhase::kFirstFlush);
  flush_message_queue();
  enter(FramePhase::kNodeProcess);
  // Copy ids first: a process may add or remove processes.
  std::vector<ProcessId> ids;
  for (const auto& p : processes_) ids.push_back(p.id);
  for (ProcessId id : ids) {
    auto it = std::find_if(processes_.begin(), processes_.end(),
                           [id](const Process& p) { return p.id == id; });
    if (it != processes_.end()) {
      auto fn = it->fn;  // the process may remove itself
      fn();
    }
  }
  enter(FramePhase::kLastFlush);
  flush_message_queue();
  phase_ = FramePhase::kBetweenFrames;

  if (!running_) return;
  const Duration period =
      config_.fps_cap ? Duration{1'000'000'000LL / config_.fps_cap} : Duration{0};
  // Godot's frame limiter (Main::iteration): a target that advances by one period per frame and
  // is clamped to within a period of reality, so a late frame is not followed by a burst.
  target_ += period;
  const Time next = std::max({target_, frame_start + config_.frame_work, scheduler_.now()});
  target_ = std::clamp(target_, next - period, next + period);
  const auto generation = generation_;
  scheduler_.schedule_at(next, [this, generation] {
    if (generation == generation_) run_frame();
  });
}

}  // namespace tb
