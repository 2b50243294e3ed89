// A profile laid over a published scenario brings its engine's defaults: a GODOT3 profile gives
// Godot 3.2's 4 KiB download chunk to a scenario that names no chunk size (the published small
// downloads), as the real Godot 3.2 engine reads them (scripts/godot-reference.sh found the model
// reading Godot 4's 64 KiB there: 383 ms against the engine's 1783 ms for 400 KiB at 60 fps).
#include <gtest/gtest.h>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/studies/reproduce.hpp"

namespace tb::studies {
namespace {

twinbench::Scenario fast_link_profile(const char* engine) {
  return scenario::parse_profile(std::string(R"(
      name: "fast"
      engine: )") + engine + R"(
      frame_loop { frame_work_ms: 1 }
      network { link { client_to_server_delay_ms: 0.05 server_to_client_delay_ms: 0.05
                       downlink_mbps: 1000 uplink_mbps: 1000 } }
  )",
                                 "fast");
}

double simulated_frames(const char* engine, const char* scenario_name, std::uint64_t bytes) {
  scenario::MeasuredCell cell;
  cell.scenario = scenario_name;
  cell.fps = 60;
  cell.body_bytes = bytes;
  cell.variant = "nat_coop";
  cell.median_ms = 1000;
  cell.origin = "test:1";
  CompareOptions options;
  options.runs = 3;
  options.warmups = 0;
  const auto c = simulate_and_compare({cell}, fast_link_profile(engine), options);
  EXPECT_EQ(c.cells.size(), 1u);
  return c.cells.empty() ? 0 : c.cells[0].simulated_frames;
}

TEST(ProfileEngine, AGodot3ProfileReadsThePublishedSmallDownloadsIn4KiBChunks) {
  // 400 KiB: one 4 KiB chunk per frame is 100 frames of body; Godot 4's 64 KiB, 7.
  EXPECT_GE(simulated_frames("GODOT3", "small_download", 409600), 100);
  EXPECT_LT(simulated_frames("GODOT4", "small_download", 409600), 20);
}

TEST(ProfileEngine, AChunkSizeTheScenarioNamesStaysUnderAGodot3Profile) {
  // The published file downloads set 64 KiB chunks (as the published harness does): 1 MiB is 16
  // chunks under either engine.
  EXPECT_LT(simulated_frames("GODOT3", "file_download", 1048576), 30);
}

}  // namespace
}  // namespace tb::studies
