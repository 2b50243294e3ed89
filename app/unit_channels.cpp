#include "unit_channels.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace tb::app {

namespace {

std::string channel_frame(std::uint32_t unit, const twinbench::Sample& sample) {
  const std::string bytes = sample.SerializeAsString();
  const auto length = static_cast<std::uint32_t>(bytes.size());
  std::string frame(8, '\0');
  std::memcpy(frame.data(), &unit, 4);
  std::memcpy(frame.data() + 4, &length, 4);
  return frame + bytes;
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

void SampleChannel::send(std::uint32_t unit, twinbench::Sample sample) const {
  if (sample.error().size() > 512) sample.set_error(sample.error().substr(0, 512));  // the head says enough
  std::string frame = channel_frame(unit, sample);
  if (frame.size() > PIPE_BUF) frame = channel_frame(unit, step_record(sample));
  if (frame.size() > PIPE_BUF) throw std::length_error("a sample's variant name is too long to report");
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
  std::size_t at = 0;  // the frames taken, erased once at the end
  for (std::uint32_t length = 0; pending_.size() - at >= 8; at += 8 + std::size_t{length}) {
    std::uint32_t unit = 0;
    std::memcpy(&unit, pending_.data() + at, 4);
    std::memcpy(&length, pending_.data() + at + 4, 4);
    if (pending_.size() - at - 8 < length) break;
    twinbench::Sample sample;
    if (sample.ParseFromArray(pending_.data() + at + 8, static_cast<int>(length))) receive(unit, sample);
  }
  pending_.erase(0, at);
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
  const std::string bytes = step_record(sample).SerializeAsString();
  const auto length = static_cast<std::uint32_t>(bytes.size());
  pending_.append(reinterpret_cast<const char*>(&length), 4);
  pending_ += bytes;
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
      throw std::runtime_error("the simulations of the other variants ended without the span of " + step.variant +
                               "'s step in round " + std::to_string(step.round));
    }
    received_.append(buffer, static_cast<std::size_t>(n));
    std::size_t at = 0;
    for (std::uint32_t length = 0; received_.size() - at >= 4; at += 4 + length) {
      std::memcpy(&length, received_.data() + at, 4);
      if (received_.size() - at - 4 < length) break;
      twinbench::Sample sample;
      if (!sample.ParseFromArray(received_.data() + at + 4, static_cast<int>(length))) {
        throw std::runtime_error("a malformed span from another simulation");
      }
      known_.emplace(runner::step_of(sample), runner::span_of(sample));
    }
    received_.erase(0, at);
  }
  return known_.at(step);
}

void SpanFeed::close_end(int end) {
  if (fds_[end] >= 0) ::close(fds_[end]);
  fds_[end] = -1;
}

}  // namespace tb::app
