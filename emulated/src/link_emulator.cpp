#include "twinbench/emulated/link_emulator.hpp"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <deque>
#include <string>

#include "twinbench/scenario/stats.hpp"
#include "twinbench/scenario/report.hpp"

namespace tb::emulated {

std::int64_t monotonic_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

LatenessSummary summarize_lateness(const std::vector<const DirectionStats*>& directions) {
  std::vector<std::int64_t> all;
  for (const auto* d : directions)
    all.insert(all.end(), d->lateness_ns.begin(), d->lateness_ns.end());
  LatenessSummary s;
  s.packets = all.size();
  if (all.empty()) return s;
  std::sort(all.begin(), all.end());
  auto at = [&](double q) {
    return scenario::quantile(all.size(), q,
                              [&](std::size_t i) { return static_cast<double>(all[i]) / 1e3; });
  };
  s.p50_us = at(0.5);
  s.p99_us = at(0.99);
  s.max_us = static_cast<double>(all.back()) / 1e3;
  return s;
}

void write_pcap(const std::string& path, std::vector<CapturedPacket> packets,
                std::int64_t origin_ns) {
  std::stable_sort(
      packets.begin(), packets.end(),
      [](const CapturedPacket& a, const CapturedPacket& b) { return a.at_ns < b.at_ns; });
  std::string out;
  auto u32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto u16 = [&](std::uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); };
  u32(0xa1b23c4d);  // nanosecond timestamps
  u16(2);
  u16(4);
  u32(0);
  u32(0);
  u32(kCaptureBytes);
  u32(101);  // LINKTYPE_RAW
  for (const auto& p : packets) {
    const std::int64_t t = std::max<std::int64_t>(0, p.at_ns - origin_ns);
    u32(static_cast<std::uint32_t>(t / 1'000'000'000));
    u32(static_cast<std::uint32_t>(t % 1'000'000'000));
    u32(static_cast<std::uint32_t>(p.head.size()));
    u32(p.length);
    out += p.head;
  }
  scenario::write_file_atomically(path, out);
}

LinkEmulator::LinkEmulator(int client_tun, int server_tun, const link::DirectionConfig& uplink,
                           const link::DirectionConfig& downlink, std::int64_t spin_us,
                           bool capture)
    : spin_ns_(spin_us * 1000),
      capture_(capture),
      origin_ns_(monotonic_ns()),
      uplink_{client_tun, server_tun, link::LinkDirection(uplink), {}, {}},
      downlink_{server_tun, client_tun, link::LinkDirection(downlink), {}, {}},
      thread_([this] { run(); }) {}

LinkEmulator::~LinkEmulator() { stop(); }

void LinkEmulator::stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

void LinkEmulator::deliver_due(Direction& d) {
  std::int64_t now = monotonic_ns();
  while (!d.held.empty() && d.held.front().due_ns <= now) {
    const Held& h = d.held.front();
    while (::write(d.to, h.bytes.data(), h.bytes.size()) < 0 && errno == EINTR) {
    }
    // A write that fails (the receiving side is gone, or its queue is full) is a drop there.
    now = monotonic_ns();
    d.stats.lateness_ns.push_back(now - h.due_ns);
    if (capture_)
      d.stats.received.push_back(
          {now, static_cast<std::uint32_t>(h.bytes.size()), h.bytes.substr(0, kCaptureBytes)});
    ++d.stats.delivered;
    d.held.pop_front();
  }
}

// Takes in what the sender sent, each packet stamped when read.
void LinkEmulator::take_in(Direction& d, std::string& buffer) {
  for (;;) {
    const ssize_t n = ::read(d.from, buffer.data(), buffer.size());
    if (n <= 0) break;
    const std::int64_t at = monotonic_ns();
    ++d.stats.packets;
    if (capture_)
      d.stats.sent.push_back({at, static_cast<std::uint32_t>(n),
                              buffer.substr(0, std::min<std::size_t>(n, kCaptureBytes))});
    const link::Verdict v = d.model.offer(at, static_cast<std::size_t>(n));
    switch (v.fate) {
      case link::Fate::kDelivered:
        d.held.push_back({v.due_ns, buffer.substr(0, static_cast<std::size_t>(n))});
        break;
      case link::Fate::kQueueFull:
        ++d.stats.queue_drops;
        break;
      case link::Fate::kPoliced:
        ++d.stats.policer_drops;
        break;
      case link::Fate::kLost:
        ++d.stats.losses;
        break;
    }
  }
}

void LinkEmulator::run() {
  // Wake-ups exactly when asked: the default 50 us timer slack would be lateness on every packet.
  ::prctl(PR_SET_TIMERSLACK, 1UL);
  // A packet from a side's kernel wakes this thread; as a real-time thread it runs at once
  // instead of waiting for the sender's time slice (~0.2 ms a wake-up on a 2-core VM). Where
  // that is not permitted it runs as an ordinary thread, and the lateness report shows the cost.
  const sched_param priority{.sched_priority = 10};
  ::pthread_setschedparam(pthread_self(), SCHED_FIFO, &priority);
  std::string buffer(65536, '\0');
  uplink_.model.set_origin(origin_ns_);
  downlink_.model.set_origin(origin_ns_);
  while (!stopping_.load(std::memory_order_relaxed)) {
    deliver_due(uplink_);
    deliver_due(downlink_);
    take_in(uplink_, buffer);
    take_in(downlink_, buffer);
    // Sleep until shortly before the next due time (or a packet comes in), then spin.
    const std::int64_t now = monotonic_ns();
    std::int64_t sleep_ns = 10'000'000;  // wake up now and then to see stop()
    for (const Direction* d : {&uplink_, &downlink_}) {
      if (!d->held.empty()) sleep_ns = std::min(sleep_ns, d->held.front().due_ns - now - spin_ns_);
    }
    if (sleep_ns <= 0) continue;
    pollfd p[2] = {{uplink_.from, POLLIN, 0}, {downlink_.from, POLLIN, 0}};
    const timespec timeout{0, static_cast<long>(sleep_ns)};
    ::ppoll(p, 2, &timeout, nullptr);
  }
}

}  // namespace tb::emulated
