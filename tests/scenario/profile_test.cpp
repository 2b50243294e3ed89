#include "twinbench/scenario/profile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "twinbench/scenario/scenario_file.hpp"

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

// The engine's defaults follow the profile's engine: a scenario that names no chunk size or TLS
// version gets Godot 3.2's (4 KiB, TLS 1.2) under a GODOT3 profile and Godot 4's otherwise; what
// the scenario names stays.
TEST(Profile, TheEnginesDefaultsAreTheProfilesEngines) {
  const std::string plain =
      "name: \"s\" variants { name: \"nat_coop\" client: HTTP_REQUEST } frame_caps: [60] "
      "body_bytes: [409600] runs: 3\n";
  const auto godot3 = parse_profile("name: \"g3\" engine: GODOT3 tls { }\n", "g3.textproto");
  const auto godot4 = parse_profile("name: \"g4\" engine: GODOT4 tls { }\n", "g4.textproto");
  const auto s3 = scenario_under_profile(plain, "s.textproto", godot3);
  EXPECT_EQ(s3.download_chunk_size(), 4096u);
  EXPECT_EQ(s3.tls().max_version(), twinbench::TLS1_2);
  const auto s4 = scenario_under_profile(plain, "s.textproto", godot4);
  EXPECT_EQ(s4.download_chunk_size(), 65536u);
  EXPECT_EQ(s4.tls().max_version(), twinbench::TLS1_3);
  const auto named =
      scenario_under_profile(plain + "download_chunk_size: 65536\n", "s.textproto", godot3);
  EXPECT_EQ(named.download_chunk_size(), 65536u);
  // Laid over a scenario whose defaults were already taken, the engine's chunk would be Godot 4's:
  // why validate, reproduce and run --profile use scenario_under_profile.
  auto defaulted = parse_scenario(plain, "s.textproto");
  apply_profile(defaulted, godot3);
  EXPECT_EQ(defaulted.download_chunk_size(), 65536u);
}

}  // namespace
}  // namespace tb::scenario
