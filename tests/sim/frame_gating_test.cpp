// Frame gating in simulation: on a fast path the cooperative HTTPRequest model cannot go faster
// than one chunk per frame (chunk x fps), while C3Http drains what arrived and is not gated.
#include <gtest/gtest.h>

#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

TEST(SimFrameGating, HttpRequestIsCappedAtChunkTimesFpsAndC3HttpIsNot) {
  const auto s = scenario::parse_scenario(R"(
      name: "gating"
      variants { name: "c3_coop"  client: C3HTTP }
      variants { name: "nat_coop" client: HTTP_REQUEST }
      frame_caps: [60, 30]
      body_bytes: [8388608]
      runs: 1
      download_to_file: true
      network {
        link { client_to_server_delay_ms: 1 server_to_client_delay_ms: 1
               downlink_mbps: 1000 uplink_mbps: 1000 }
      }
  )",
                                          "gating");
  const auto results = sim::run_simulated(s, runner::RunOptions{}, 1);
  ASSERT_EQ(results.samples_size(), 4);
  for (const auto& sample : results.samples()) {
    ASSERT_EQ(sample.result(), "success") << sample.error();
    const double bytes_per_second =
        static_cast<double>(sample.body_bytes()) / (sample.elapsed_ms() / 1000.0);
    const double ceiling = static_cast<double>(s.download_chunk_size()) * sample.fps();
    if (sample.variant() == "nat_coop") {
      EXPECT_LE(bytes_per_second, ceiling) << sample.fps() << " fps";
      // ...and close to it: the path (1 Gbit/s) is 10x faster than the ceiling at 60 fps.
      EXPECT_GE(bytes_per_second, 0.8 * ceiling) << sample.fps() << " fps";
    } else {
      EXPECT_GT(bytes_per_second, 3 * ceiling) << sample.fps() << " fps";
    }
  }
}

TEST(SimFrameGating, AReaderThatFillsTheWindowDuringLossRecoveryIsServed) {
  // 4 KiB per frame at 30 fps keeps the receive window full while the BBR server recovers from its
  // startup losses: ns-3's NextSeg then offered a zero-length segment and the simulation crashed
  // (a point of the body_chunk_fps sweep). The transfer must finish, at the reader's pace.
  const auto s = scenario::parse_scenario(R"(
      name: "full_window"
      variants { name: "nat_coop" client: HTTP_REQUEST }
      frame_caps: [30]
      body_bytes: [8388608]
      runs: 1
      warmups: 0
      download_chunk_size: 4096
      network {
        link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 100 uplink_mbps: 50 }
        server_tcp { congestion_control: BBR pacing: true slow_start_after_idle: false nodelay: true }
      }
  )",
                                          "full_window");
  const auto results = sim::run_simulated(s, runner::RunOptions{}, 1);
  ASSERT_EQ(results.samples_size(), 1);
  const auto& sample = results.samples(0);
  ASSERT_EQ(sample.result(), "success") << sample.error();
  const double reader_ms = 8388608.0 / 4096 * 1000.0 / 30;  // one chunk per frame
  EXPECT_GT(sample.elapsed_ms(), reader_ms);
  EXPECT_LT(sample.elapsed_ms(), reader_ms * 1.02);
}

}  // namespace
}  // namespace tb
