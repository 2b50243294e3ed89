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
