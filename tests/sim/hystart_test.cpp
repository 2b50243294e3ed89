// The simulated TCP: CUBIC leaves slow start by Linux's HyStart (LinuxCubic), before its doubling
// window overflows the bottleneck queue. ns-3.37's HyStart waited, on a 100 ms path, for the RTT to
// double; the window outgrew the queue and a window's worth was lost and recovered (the kernel
// comparison: 1 MiB at 100 ms, 20 Mbit/s came out 1.6 round trips slower than the kernel).
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace test;

TEST(SimHyStart, CubicLeavesSlowStartBeforeTheQueueOverflowsOnALongPath) {
  // 100 ms round trip at 20 Mbit/s: a BDP of ~172 segments, and a queue of one BDP (the default).
  Bench b(path(50, 20));
  b.connect();
  constexpr std::uint64_t kBytes = 1 << 20;
  const double rtt = 100;
  const double wire = static_cast<double>(kBytes) / 1448 * 1502 * 8 / 20e6 * 1e3;  // 435 ms
  const double ms = b.get(download(kBytes));
  EXPECT_EQ(b.body_bytes(), kBytes);
  EXPECT_GT(ms, rtt + wire);
  // Without loss: four round trips of growth (10, 20, 40, 80 segments; the fifth flight of 160
  // fills the path), then the rest at the link rate. A lost window costs a recovery on top.
  EXPECT_LT(ms, 4 * rtt + wire + rtt / 2) << "slow start overshot the queue";
}

}  // namespace
}  // namespace tb::sim
