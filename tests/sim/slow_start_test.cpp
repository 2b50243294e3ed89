// Slow start counts packets, not bytes, as Linux does: the response head (a short segment) grows
// the server's window by one like a full segment, so a body of 9 + 20 full segments after the
// head takes two round trips on a fresh connection, not three (found against the kernel on the
// emulated path; tests/emulated/emulated_run_test.cpp checks the kernel does the same).
#include <gtest/gtest.h>

#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

constexpr std::uint64_t kSegment = 1448;  // MSS with timestamps on a 1500-byte path

twinbench::Scenario fresh_downloads() {
  auto s = scenario::parse_scenario(R"(
      name: "slow_start"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [0]
      body_bytes: [13032, 41992, 43440]  # 9, 9 + 20 and 9 + 20 + 1 segments of 1448 bytes
      runs: 1
      warmups: 0
      frame_loop { frame_work_ms: 0.1 }
      network {
        link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 1000 uplink_mbps: 1000 }
      }
  )",
                                    "slow_start");
  EXPECT_EQ(s.body_bytes(0), 9 * kSegment);   // fills the initial window with the head
  EXPECT_EQ(s.body_bytes(1), 29 * kSegment);  // then exactly the doubled window
  EXPECT_EQ(s.body_bytes(2), 30 * kSegment);
  return s;
}

TEST(SimSlowStart, TheResponseHeadCountsAsAPacketInTheWindowGrowth) {
  const auto results = sim::run_simulated(fresh_downloads(), runner::RunOptions{}, 1);
  ASSERT_EQ(results.samples_size(), 3);
  for (const auto& s : results.samples()) ASSERT_EQ(s.result(), "success") << s.error();
  const double one_round = results.samples(0).elapsed_ms();
  const double two_rounds = results.samples(1).elapsed_ms();
  const double three_rounds = results.samples(2).elapsed_ms();
  const double rtt = 40;
  EXPECT_NEAR(two_rounds - one_round, rtt, 2) << "9 + 20 segments: the second round carries 20";
  EXPECT_NEAR(three_rounds - one_round, 2 * rtt, 2) << "one segment more spills into a third round";
}

}  // namespace
}  // namespace tb
