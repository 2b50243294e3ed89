// compare's pairing and its verdict: within max(1 frame, 5 %) of the emulated path, and a cell
// that one twin has no successful sample of is shown and counted, not dropped.
#include "twinbench/studies/twin_compare.hpp"

#include <gtest/gtest.h>

namespace tb::studies {
namespace {

void add(twinbench::ResultSet& r, const std::string& variant, std::uint32_t fps, double ms,
         const std::string& result = "success") {
  auto* s = r.add_samples();
  s->set_scenario("grid");
  s->set_variant(variant);
  s->set_fps(fps);
  s->set_body_bytes(0);
  s->set_elapsed_ms(ms);
  s->set_result(result);
  if (result != "success") s->set_error("timed out");
}

twinbench::ResultSet base() {
  twinbench::ResultSet r;
  r.mutable_scenario()->set_name("grid");
  r.mutable_scenario()->mutable_frame_loop()->set_frame_work_ms(1.0);
  for (const char* v : {"near", "far", "lost"}) {
    auto* variant = r.mutable_scenario()->add_variants();
    variant->set_name(v);
  }
  r.mutable_scenario()->add_frame_caps(60);
  r.mutable_scenario()->add_body_bytes(0);
  r.mutable_run()->mutable_emulated()->set_valid(true);
  return r;
}

TEST(TwinCompare, CellsAreJudgedAgainstOneFrameOrFivePercentAndMissingOnesCount) {
  twinbench::ResultSet simulated = base(), emulated = base();
  for (double ms : {100.0, 101.0, 102.0}) add(simulated, "near", 60, ms);
  for (double ms : {110.0, 111.0, 112.0})
    add(emulated, "near", 60, ms);  // 10 ms < one 16.7 ms frame
  for (double ms : {100.0, 101.0, 102.0}) add(simulated, "far", 60, ms);
  for (double ms : {130.0, 131.0, 132.0}) add(emulated, "far", 60, ms);  // 30 ms: two frames, 23 %
  add(simulated, "lost", 60, 0, "cancelled");
  add(emulated, "lost", 60, 50.0);
  const auto cells = pair_cells("rtt_ms=40", simulated, emulated);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_TRUE(cells[0].within());
  EXPECT_NEAR(cells[0].diff_ms(), -10, 1e-9);
  EXPECT_NEAR(cells[0].diff_frames(), -10 / (1000.0 / 60), 1e-9);
  EXPECT_FALSE(cells[1].within());
  EXPECT_FALSE(cells[2].within());
  EXPECT_NE(cells[2].missing.find("simulated"), std::string::npos) << cells[2].missing;
  const std::string md = twin_markdown(cells, "t", {});
  EXPECT_NE(md.find("**1 of 3 cells (33 %) within max(1 frame, 5 %)"), std::string::npos) << md;
  EXPECT_NE(twin_csv(cells).find("\"rtt_ms=40\",grid,60,0,lost,,,,,,,,,,no,"), std::string::npos)
      << twin_csv(cells);
}

}  // namespace
}  // namespace tb::studies
