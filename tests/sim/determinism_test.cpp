// The simulated TCP: Same seed, same times; loss and jitter follow the seed; bulk at the bottleneck
// rate.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- determinism ----

TEST(SimDeterminism, SameConfigAndSeedGiveTheSameTimes) {
  const auto n = path();
  EXPECT_EQ(download_ms(n, 7, 1 << 20), download_ms(n, 7, 1 << 20));
}

TEST(SimDeterminism, LossAndJitterFollowTheSeed) {
  auto n = path();
  n.mutable_link()->set_loss_rate(0.01);
  n.mutable_link()->set_jitter_ms(2);
  const double first = download_ms(n, 3, 1 << 20);
  EXPECT_EQ(first, download_ms(n, 3, 1 << 20));
  EXPECT_NE(first, download_ms(n, 4, 1 << 20));
}

TEST(SimThroughput, ThirtyTwoMibRunsAtTheBottleneckRate) {
  // 32 MiB in 1448-byte segments of 1502 bytes on the wire at 100 Mbit/s: 2.78 s, plus slow start
  // and loss recovery at the end of slow start (the queue holds one BDP).
  const double ms = download_ms(with_server_nodelay(path()), 1, 32u << 20);
  EXPECT_GT(ms, wire_ms(32u << 20));
  EXPECT_LT(ms, wire_ms(32u << 20) + 10 * kRttMs) << ms;
}

}  // namespace
}  // namespace tb::sim
