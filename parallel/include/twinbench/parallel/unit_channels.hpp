#pragma once
// Pipes between the processes of one simulated run (app/sim_backend.cpp, run_all): samples from
// the unit processes to the parent, and from the parent to a unit that waits out others' steps.
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "results.pb.h"
#include "twinbench/runner/run_scenario.hpp"

namespace tb::parallel {

// The fields of a sample that name its step and how long it took (runner::step_of, span_of).
twinbench::Sample step_record(const twinbench::Sample& sample);

// Samples sent from unit processes to the parent as they are recorded, for live progress and for
// the units that wait out their steps (SpanFeed): a frame of the unit's index, the length and the
// serialized Sample, each in one write() of at most PIPE_BUF bytes, so frames from several
// children never interleave.
class SampleChannel {
 public:
  using Receiver = std::function<void(std::size_t unit, const twinbench::Sample&)>;
  SampleChannel();
  ~SampleChannel();
  SampleChannel(const SampleChannel&) = delete;
  SampleChannel& operator=(const SampleChannel&) = delete;

  // In a child. A sample too long for one frame goes as its step record (step_record).
  void send(std::uint32_t unit, twinbench::Sample sample) const;
  // In the parent: waits up to `timeout_ms` for samples, then hands each whole one to `receive`.
  void receive(int timeout_ms, const Receiver& receive);

 private:
  int fds_[2] = {-1, -1};
  std::string pending_;
};

// The spans of the steps a unit waits out, fed to its child while the units running those steps
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
  // No more samples will come (the units it waits for have ended, or a unit failed).
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

}  // namespace tb::parallel
