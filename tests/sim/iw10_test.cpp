// The simulated TCP: the initial window, IW10 (RFC 6928) on fresh and warm connections.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- IW10 (RFC 6928): 10 segments of 1448 B = 14480 B in the first flight ----

TEST(SimIw10, TenKibArrivesOneRttAfterTheRequestOnAFreshConnection) {
  Bench b(with_server_nodelay(path()));
  b.connect();
  // Head (~130 B) + 10240 B = 8 segments <= IW10: request 20 ms out, response 20 ms back, plus
  // ~1 ms serialization.
  const double ms = b.get(download(10240));
  EXPECT_EQ(b.body_bytes(), 10240u);
  EXPECT_GE(ms, kRttMs);
  EXPECT_LT(ms, kRttMs + 3) << ms;
}

TEST(SimIw10, TwentyKibNeedsASecondRoundTripOnAFreshConnection) {
  Bench b(with_server_nodelay(path()));
  b.connect();
  // 15 segments > IW10: the last 5 go when the first ACKs return, one RTT later.
  const double ms = b.get(download(20480));
  EXPECT_EQ(b.body_bytes(), 20480u);
  EXPECT_GE(ms, 2 * kRttMs);
  EXPECT_LT(ms, 2 * kRttMs + 5) << ms;
}

TEST(SimIw10, TwentyKibTakesOneRttOnAWarmConnection) {
  Bench b(with_server_nodelay(path()));
  b.connect();
  b.get(download(400 * 1024));  // slow start grows cwnd far beyond 15 segments
  const double ms = b.get(download(20480));
  EXPECT_GE(ms, kRttMs);
  EXPECT_LT(ms, kRttMs + 5) << ms;
}

TEST(SimIw10, ServerNagleHoldsTheBodyTailUntilTheHeadIsAcked) {
  // Linux's Nagle (Minshall): the head goes out alone as a small segment; the body's last partial
  // segment waits while that small segment is unacknowledged. The client ACKs head + first full
  // segment at once (2 segments), so the tail leaves one RTT later: 2 RTT instead of 1.
  Bench b(path());
  b.connect();
  const double ms = b.get(download(10240));
  EXPECT_GE(ms, 2 * kRttMs);
  EXPECT_LT(ms, 2 * kRttMs + 3) << ms;
}

}  // namespace
}  // namespace tb::sim
