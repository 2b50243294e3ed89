#include "twinbench/scenario/profile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "twinbench/scenario/load.hpp"

namespace tb::scenario {
namespace {

using ::testing::HasSubstr;

TEST(Profile, LaysItsNetworkFrameLoopAndTlsOverAScenarioKeepingTheScenariosOwn) {
  const auto profile = parse_profile(
      "name: \"p\" engine: GODOT3 frame_loop { frame_work_ms: 2.5 }\n"
      "network { link { client_to_server_delay_ms: 7 server_to_client_delay_ms: 8 downlink_mbps: "
      "50 uplink_mbps: 5 } }\n"
      "tls { }\ntarget { base_url: \"https://example.test\" }\n",
      "p.textproto");
  auto s = parse_scenario(
      "name: \"s\" variants { name: \"c3_coop\" client: C3HTTP } frame_caps: [60] body_bytes: [0] "
      "runs: 3\n"
      "target { ping_path: \"/p\" }\n",
      "s.textproto");
  apply_profile(s, profile);
  EXPECT_EQ(s.name(), "s");
  EXPECT_EQ(s.runs(), 3u);
  EXPECT_EQ(s.engine(), twinbench::GODOT3);
  EXPECT_DOUBLE_EQ(s.frame_loop().frame_work_ms(), 2.5);
  EXPECT_DOUBLE_EQ(s.network().link().server_to_client_delay_ms(), 8);
  EXPECT_TRUE(s.has_tls());
  EXPECT_EQ(s.target().base_url(), "https://example.test");
  EXPECT_EQ(s.target().ping_path(), "/p");
}

TEST(Profile, ErrorsNameTheFileAndLine) {
  try {
    parse_profile("name: \"p\"\nnetwork { link { bogus: 1 } }\n", "p.textproto");
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.textproto:2:"));
    EXPECT_THAT(e.what(), HasSubstr("bogus"));
  }
  EXPECT_THROW(parse_profile("engine: GODOT4\n", "unnamed.textproto"), ScenarioError);
}

}  // namespace
}  // namespace tb::scenario
