// The simulated TCP: Slow start after idle (tcp_slow_start_after_idle), for CUBIC and BBR.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- slow-start-after-idle ----

struct IdleRun {
  double fresh_ms;
  double after_idle_ms;
};

IdleRun idle_run(twinbench::CongestionControl cc, bool slow_start_after_idle) {
  auto n = with_server_nodelay(path());
  n.mutable_server_tcp()->set_congestion_control(cc);
  n.mutable_server_tcp()->set_slow_start_after_idle(slow_start_after_idle);
  Bench b(n);
  b.connect();
  IdleRun r{};
  r.fresh_ms = b.get(download(400 * 1024));
  b.idle(2s);  // far longer than one RTO (~200 ms on this path)
  r.after_idle_ms = b.get(download(400 * 1024));
  return r;
}

TEST(SimSlowStartAfterIdle, CubicRestartsFromTheInitialWindowAfterIdle) {
  // 400 KiB = 283 segments. From IW10, slow start sends 10 + 20 + 40 + 80 + 160 >= 283 in 5
  // rounds, so a restarted window needs about as many RTTs as a fresh connection.
  const IdleRun on = idle_run(twinbench::CUBIC, true);
  EXPECT_GE(on.after_idle_ms, 4 * kRttMs) << on.after_idle_ms;
  EXPECT_NEAR(on.after_idle_ms, on.fresh_ms, kRttMs) << on.fresh_ms << " " << on.after_idle_ms;
}

TEST(SimSlowStartAfterIdle, TheWindowHalvesOncePerLinuxRtoOfIdle) {
  // 100 ms RTT. Linux's RTO is srtt + max(4 rttvar, rto_min): about 100 + 200 = 300 ms here
  // (RFC 6298's max(rto_min, srtt + 4 rttvar), ns-3's own, would be about 200 ms). The client waits
  // 150 ms after its first download, so the server idles about 250 ms (the last segment's and the
  // next request's 50 ms each way, plus the gap): within Linux's RTO, so the window grown by the
  // first download (> 283 segments) is kept and sends the second at once: one RTT plus 34 ms of
  // serialization. Restarted or halved even once, it would need another round of 100 ms.
  constexpr double kLongRttMs = 100;
  auto n = with_server_nodelay(path(kLongRttMs / 2));
  n.mutable_server_tcp()->set_congestion_control(twinbench::CUBIC);
  n.mutable_server_tcp()->set_slow_start_after_idle(true);
  Bench b(n);
  b.connect();
  const double fresh_ms = b.get(download(400 * 1024));
  b.idle(150ms);
  const double after_gap_ms = b.get(download(400 * 1024));
  EXPECT_LT(after_gap_ms, kLongRttMs + 34 + 10) << fresh_ms << " " << after_gap_ms;
  // The second download grew the window to about 580 segments. After a 1 s gap the server idles
  // about 1.13 s against an RTO of about 330 ms (srtt rose with the queue): three halvings, to
  // about 72 segments, which need three rounds for 283 (72 + 144 + 288). ns-3's ~200 ms RTO
  // would halve five times, down to 18 segments and five rounds.
  b.idle(1s);
  const double after_idle_ms = b.get(download(400 * 1024));
  EXPECT_GT(after_idle_ms, 2.5 * kLongRttMs) << after_idle_ms;
  EXPECT_LT(after_idle_ms, 4 * kLongRttMs) << after_idle_ms;
}

TEST(SimSlowStartAfterIdle, CubicKeepsItsWindowWhenDisabled) {
  // The window grown by the first download (> 283 segments) sends everything at once: one RTT
  // plus 283 x 0.12 ms = 34 ms of serialization at the bottleneck.
  const IdleRun off = idle_run(twinbench::CUBIC, false);
  EXPECT_LT(off.after_idle_ms, kRttMs + 34 + 10) << off.after_idle_ms;
  EXPECT_LT(off.after_idle_ms, off.fresh_ms - 2 * kRttMs);
}

TEST(SimSlowStartAfterIdle, BbrIgnoresIt) {
  // Linux applies the restart only to congestion controls without cong_control; BBR has one.
  const IdleRun on = idle_run(twinbench::BBR, true);
  const IdleRun off = idle_run(twinbench::BBR, false);
  EXPECT_EQ(on.after_idle_ms, off.after_idle_ms);
  EXPECT_LT(on.after_idle_ms, idle_run(twinbench::CUBIC, true).after_idle_ms - kRttMs)
      << on.after_idle_ms;
}

}  // namespace
}  // namespace tb::sim
