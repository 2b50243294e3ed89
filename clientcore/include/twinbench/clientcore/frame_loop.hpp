#pragma once
// The engine's main loop, reduced to what decides HTTP timing. One frame runs, in order
// (Godot 4.x and 3.2 alike, SceneTree::process):
//   1. process_frame      - coroutines awaiting `get_tree().process_frame` resume (C3Http)
//   2. message-queue flush - deferred calls, including those posted by worker threads
//   3. node process        - internal processing (HTTPRequest::_update_connection)
//   4. message-queue flush - deferred calls made during node process (request_completed)
// and the next frame starts max(frame work, 1/cap) after this one (cap 0 = uncapped).
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "twinbench/clientcore/scheduler.hpp"

namespace tb {

// The phases of a frame, in order (see above); kBetweenFrames outside any frame.
enum class FramePhase { kBetweenFrames, kProcessFrame, kFirstFlush, kNodeProcess, kLastFlush };

struct FrameLoopConfig {
  std::uint32_t fps_cap = 60;  // 0 = uncapped
  Duration frame_work{0};      // CPU + render time of one frame
};

class FrameLoop {
 public:
  using ProcessId = std::uint64_t;

  FrameLoop(Scheduler& scheduler, FrameLoopConfig config);
  void start();  // the first frame begins now
  void stop();   // no further frames are scheduled
  void set_config(FrameLoopConfig config) { config_ = config; }
  const FrameLoopConfig& config() const { return config_; }

  // Frames begun so far; during a frame, that frame's 1-based number.
  std::uint64_t frames() const { return frame_; }
  FramePhase phase() const { return phase_; }

  // `await get_tree().process_frame`: `resume` runs in phase 1 of the next frame.
  void await_process_frame(std::function<void()> resume);
  // Object.call_deferred / MessageQueue::push_callable. Callable from any thread.
  void call_deferred(std::function<void()> fn);
  // set_process_internal(true): `process` runs in phase 3 of every frame until removed.
  ProcessId add_internal_process(std::function<void()> process);
  void remove_internal_process(ProcessId id);
  // Whether `phase` of frame number `frame` is still to come.
  bool ahead(std::uint64_t frame, FramePhase phase) const;
  // Runs `fn` in `phase` of frame number `frame`, at the start of that phase (before a flush's
  // deferred calls, which `fn`'s own then join). Throws std::logic_error unless ahead().
  void at(std::uint64_t frame, FramePhase phase, std::function<void()> fn);

 private:
  void run_frame();
  void enter(FramePhase phase);  // runs what at() left for this moment
  void flush_message_queue();

  Scheduler& scheduler_;
  FrameLoopConfig config_;
  bool running_ = false;
  std::uint64_t frame_ = 0;
  FramePhase phase_ = FramePhase::kBetweenFrames;
  std::multimap<std::pair<std::uint64_t, FramePhase>, std::function<void()>> scheduled_;
  Time target_{0};                // when the next frame is due under the cap
  std::uint64_t generation_ = 0;  // invalidates frames scheduled before a stop()
  std::vector<std::function<void()>> awaiting_;
  std::mutex deferred_mutex_;  // worker threads post deferred calls
  std::vector<std::function<void()>> deferred_;
  struct Process {
    ProcessId id;
    std::function<void()> fn;
  };
  std::vector<Process> processes_;
  ProcessId next_process_id_ = 1;
};

}  // namespace tb
