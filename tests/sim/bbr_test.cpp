// The simulated TCP: BBR: no PROBE_RTT on idle keep-alive connections, no STARTUP ended by
// requests on an idle connection, and pacing below the bottleneck.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

TEST(SimBbrKeepAlive, AnIdleKeepAliveConnectionDoesNotProbeRtt) {
  // Linux's BBR enters no PROBE_RTT on the ACK that restarts an idle, app-limited flow, so a
  // keep-alive connection serving a request a second keeps its bandwidth estimate. (ns-3's BBR
  // probed every 10 s with a 4-packet window, then paced later responses at ~1.4 Mbit/s.)
  Bench b(with_bbr_server(path()));
  b.connect();
  b.get(download(400 * 1024));
  b.idle(1s);
  const double warm_ms = b.get(download(400 * 1024));
  for (int i = 0; i < 12; ++i) {  // 12 s of small requests: past BBR's 10 s min-RTT window
    b.idle(1s);
    b.get(download(10240));
  }
  b.idle(1s);
  const double later_ms = b.get(download(400 * 1024));
  EXPECT_LT(later_ms, warm_ms + kRttMs) << warm_ms << " then " << later_ms;
}

TEST(SimBbrPacing, AWarmResponsePacesOnePercentBelowTheBottleneck) {
  // Linux's BBR paces 1 % below its bandwidth estimate (bbr_pacing_margin_percent). A warm
  // connection's 400 KiB response fits in its window and, after an idle, goes out at gain 1: its
  // 283 packets take 34.0 ms on the 100 Mbit/s line, paced 1 % slower 34.3 ms, plus one RTT and
  // the server's time. At the estimate itself (ns-3's TcpBbr), the line alone sets the time.
  Bench b(with_bbr_server(path()));
  b.connect();
  b.get(download(4u << 20));  // the estimate settles at the bottleneck rate
  b.idle(1s);
  const std::uint64_t body = 400 * 1024;
  const double line_ms = wire_ms(body);
  const double ms = b.get(download(body));
  const double pacing_ms =
      ms - kRttMs;  // the server's time and the head are a fraction of a packet
  EXPECT_GT(pacing_ms, line_ms * 1.005) << ms;
  EXPECT_LT(pacing_ms, line_ms * 1.015) << ms;
}


TEST(SimBbrKeepAlive, RequestsOnAnIdleConnectionDoNotEndStartup) {
  // A request that reaches an idle connection is acknowledged by nothing the server had in
  // flight: Linux skips BBR for it (tcp_ack's no_queue path), so small requests with idle gaps
  // leave a kept-alive connection in STARTUP. (ns-3's TcpBbr counted each as a round without
  // bandwidth growth; three ended STARTUP at a ping's bandwidth, and the next 400 KiB took 16
  // round trips instead of the 6 of a fresh connection's startup.)
  const std::uint64_t body = 400 * 1024;
  const double fresh_ms = download_ms(with_bbr_server(path()), 1, body);

  Bench b(with_bbr_server(path()));
  b.connect();
  for (int i = 0; i < 4; ++i) {
    b.idle(500ms);
    b.get(download(0));
  }
  b.idle(500ms);
  const double after_pings_ms = b.get(download(body));
  EXPECT_LT(after_pings_ms, fresh_ms + kRttMs) << fresh_ms;
  // Still in STARTUP, the window has grown to the whole response: the next one takes a round
  // trip for the request and the line time for the body.
  b.idle(500ms);
  const double warm_ms = b.get(download(body));
  EXPECT_LT(warm_ms, kRttMs + wire_ms(body) * 1.05) << after_pings_ms;
}

}  // namespace
}  // namespace tb::sim
