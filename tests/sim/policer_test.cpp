// The simulated TCP: A policed downlink: a token bucket that drops.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- a policed downlink: a token bucket that drops ----

twinbench::Network policed(double policer_mbps, std::uint64_t burst_bytes) {
  auto n = with_server_nodelay(path());
  n.mutable_link()->set_downlink_policer_mbps(policer_mbps);
  n.mutable_link()->set_downlink_policer_burst_bytes(burst_bytes);
  return n;
}

TEST(SimPolicer, ABodyWithinTheBucketPassesAsOnTheLineAlone) {
  // 10 KiB fits in IW10 and in a 64 KiB bucket: nothing is dropped, nothing waits.
  EXPECT_EQ(download_ms(policed(10, 64 << 10), 1, 10 << 10),
            download_ms(with_server_nodelay(path()), 1, 10 << 10));
}

TEST(SimPolicer, ABulkTransferGetsNoMoreThanTheBucketPlusTheRate) {
  // Whatever TCP does, the body's payload that passes a 20 Mbit/s policer with a 64 KiB bucket is
  // at most 64 KiB plus 20 Mbit/s x the time (1.65 s for 4 MiB), five times the line's rate.
  const std::uint64_t body = 4u << 20;
  const double floor_ms = static_cast<double>(body - (64 << 10)) * 8 / 20e6 * 1e3;
  for (const auto cc : {twinbench::CUBIC, twinbench::BBR}) {
    auto n = policed(20, 64 << 10);
    n.mutable_server_tcp()->set_congestion_control(cc);
    const double ms = download_ms(n, 1, body);
    EXPECT_GT(ms, floor_ms) << twinbench::CongestionControl_Name(cc);
    EXPECT_LT(ms, 4 * floor_ms) << twinbench::CongestionControl_Name(cc);
  }
}

}  // namespace
}  // namespace tb::sim
