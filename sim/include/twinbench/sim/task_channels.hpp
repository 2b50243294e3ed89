#pragma once
// Pipes between the processes of one simulated run (sim/src/sim_backend.cpp, SimulationPool):
// samples from the task processes to the parent, and from the parent to a task that waits out
// others' steps.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "results.pb.h"
#include "twinbench/runner/run_scenario.hpp"

namespace tb::sim {

// The fields of a sample that name its step and how long it took (runner::step_of, span_of).
twinbench::Sample step_record(const twinbench::Sample& sample);

// Samples sent from task processes to the parent as they are recorded, for live progress and for
// the tasks that wait out their steps (SpanFeed): a frame of the task's index, the length and the
// serialized Sample, each in one write() of at most PIPE_BUF bytes, so frames from several
// children never interleave.
class SampleChannel {
 public:
  using Receiver = std::function<void(std::size_t task, const twinbench::Sample&)>;
  SampleChannel();
  ~SampleChannel();
  SampleChannel(const SampleChannel&) = delete;
  SampleChannel& operator=(const SampleChannel&) = delete;

  // In a child. A sample too long for one frame goes as its step record (step_record).
  void send(std::uint32_t task, twinbench::Sample sample) const;
  // In the parent: waits up to `timeout_ms` for samples, then hands each whole one to `receive`.
  void receive(int timeout_ms, const Receiver& receive);

 private:
  int fds_[2] = {-1, -1};
  std::string pending_;
};

// The spans of the steps a task waits out, fed to its child while the tasks running those steps
// record them, so that it runs alongside them instead of after them. The parent writes each of
// their samples (its step record) into a pipe, keeping what the pipe does not take for later;
// the child reads, when its script reaches a step, until it has that step's span.
class SpanFeed {
 public:
  SpanFeed();
  ~SpanFeed();
  SpanFeed(const SpanFeed&) = delete;
  SpanFeed& operator=(const SpanFeed&) = delete;

  // In the parent.
  void add(const twinbench::Sample& sample);
  // Writes what the pipe takes without waiting; once finished and written out, closes the pipe,
  // so that the reader's next read ends instead of waiting.
  void flush();
  // No more samples will come (the tasks it waits for have ended, or a task failed).
  void finish();

  // In a child: only the child that reads a feed keeps its read end, and no child keeps a write
  // end, so the reader sees the end of the feed when the parent closes it.
  void keep_in_child(bool reader);
  // The step's span, read from the feed (waiting for it if need be). Throws std::runtime_error
  // if the feed ends without it.
  runner::StepSpan span_of_step(const runner::StepKey& step);

 private:
  void close_end(int end);

  int fds_[2] = {-1, -1};
  std::string pending_;  // parent: written to the pipe when it takes it
  bool finished_ = false;
  std::string received_;  // child: read, not yet a whole frame
  std::map<runner::StepKey, runner::StepSpan> known_;
};

}  // namespace tb::sim
