#include "twinbench/sim/task_channels.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace tb::sim {

namespace {

// A frame: the task's index and the length (4 bytes each, host order: both ends are this
// process or its fork), then the serialized Sample.
std::string channel_frame(std::uint32_t task, const twinbench::Sample& sample) {
  const std::string bytes = sample.SerializeAsString();
  const auto length = static_cast<std::uint32_t>(bytes.size());
  std::string frame(8, '\0');
  std::memcpy(frame.data(), &task, 4);
  std::memcpy(frame.data() + 4, &length, 4);
  return frame + bytes;
}

// Hands each whole frame at the start of `buffer` to `take` (false: the sample did not parse),
// then erases them at once; a partial frame stays for the next read.
template <typename Take>
void take_whole_frames(std::string& buffer, Take&& take) {
  std::size_t at = 0;
  for (std::uint32_t length = 0; buffer.size() - at >= 8; at += 8 + std::size_t{length}) {
    std::uint32_t task = 0;
    std::memcpy(&task, buffer.data() + at, 4);
    std::memcpy(&length, buffer.data() + at + 4, 4);
    if (buffer.size() - at - 8 < length) break;
    twinbench::Sample sample;
    take(task, sample.ParseFromArray(buffer.data() + at + 8, static_cast<int>(length)), sample);
  }
  buffer.erase(0, at);
}

}  // namespace

twinbench::Sample step_record(const twinbench::Sample& sample) {
  twinbench::Sample r;
  r.set_variant(sample.variant());
  r.set_fps(sample.fps());
  r.set_body_bytes(sample.body_bytes());
  r.set_round(sample.round());
  r.set_frames(sample.frames());
  r.set_result(sample.result());
  r.set_error(sample.error());
  return r;
}

SampleChannel::SampleChannel() {
  if (::pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  ::fcntl(fds_[0], F_SETFL, O_NONBLOCK);
}

SampleChannel::~SampleChannel() {
  ::close(fds_[0]);
  ::close(fds_[1]);
}

void SampleChannel::send(std::uint32_t task, twinbench::Sample sample) const {
  if (sample.error().size() > 512)
    sample.set_error(sample.error().substr(0, 512));  // the head says enough
  std::string frame = channel_frame(task, sample);
  if (frame.size() > PIPE_BUF) frame = channel_frame(task, step_record(sample));
  if (frame.size() > PIPE_BUF)
    throw std::length_error("a sample's variant name is too long to report");
  while (::write(fds_[1], frame.data(), frame.size()) < 0 && errno == EINTR) {
  }
}

void SampleChannel::receive(int timeout_ms, const Receiver& receive) {
  pollfd ready{fds_[0], POLLIN, 0};
  if (timeout_ms > 0) ::poll(&ready, 1, timeout_ms);
  char buffer[65536];
  while (true) {  // everything the pipe holds now; a signal does not end the drain early
    const ssize_t n = ::read(fds_[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  take_whole_frames(pending_,
                    [&](std::uint32_t task, bool parsed, const twinbench::Sample& sample) {
                      if (parsed) receive(task, sample);
                    });
}

SpanFeed::SpanFeed() {
  if (::pipe(fds_) != 0) throw std::runtime_error("pipe failed");
  ::fcntl(fds_[1], F_SETFL, O_NONBLOCK);
}

SpanFeed::~SpanFeed() {
  close_end(0);
  close_end(1);
}

void SpanFeed::add(const twinbench::Sample& sample) {
  pending_ += channel_frame(0, step_record(sample));
  flush();
}

void SpanFeed::flush() {
  while (!pending_.empty() && fds_[1] >= 0) {
    const ssize_t n = ::write(fds_[1], pending_.data(), pending_.size());
    if (n < 0 && errno == EINTR) continue;
    // Full (EAGAIN): the rest waits for the next flush. (EPIPE cannot happen: this process keeps
    // the read end open until the feed is destroyed.)
    if (n <= 0) break;
    pending_.erase(0, static_cast<std::size_t>(n));
  }
  if (finished_ && (pending_.empty() || fds_[1] < 0)) close_end(1);
}

void SpanFeed::finish() {
  finished_ = true;
  flush();
}

void SpanFeed::keep_in_child(bool reader) {
  close_end(1);
  if (!reader) close_end(0);
}

runner::StepSpan SpanFeed::span_of_step(const runner::StepKey& step) {
  for (auto it = known_.find(step); it == known_.end(); it = known_.find(step)) {
    char buffer[65536];
    const ssize_t n = fds_[0] < 0 ? 0 : ::read(fds_[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error("the simulations of the other variants ended without the span of " +
                               step.variant + "'s step in round " + std::to_string(step.round));
    }
    received_.append(buffer, static_cast<std::size_t>(n));
    take_whole_frames(received_, [&](std::uint32_t, bool parsed, const twinbench::Sample& sample) {
      if (!parsed) throw std::runtime_error("a malformed span from another simulation");
      known_.emplace(runner::step_of(sample), runner::span_of(sample));
    });
  }
  return known_.at(step);
}

void SpanFeed::close_end(int end) {
  if (fds_[end] >= 0) ::close(fds_[end]);
  fds_[end] = -1;
}

}  // namespace tb::sim
