// compare's pairing and its two verdicts: within max(1 frame, 5 %) of the emulated path in time,
// and (capped cells) median frame counts at most one apart; a cell that one twin has no
// successful sample of is shown and counted, not dropped.
#include "twinbench/studies/twin_compare.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tb::studies {
namespace {

// A sample of `ms` at `fps`, with the frames it took (at least the whole frames in `ms`).
void add(twinbench::ResultSet& r, const std::string& variant, std::uint32_t fps, double ms,
         const std::string& result = "success") {
  auto* s = r.add_samples();
  s->set_frames(fps > 0 ? static_cast<std::uint64_t>(ms * fps / 1000) : 0);
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
  for (double ms : {140.0, 141.0, 142.0})
    add(emulated, "far", 60, ms);  // 40 ms: 6 frames against 8, 28 %
  add(simulated, "lost", 60, 0, "cancelled");
  add(emulated, "lost", 60, 50.0);
  const auto cells = pair_cells("rtt_ms=40", simulated, emulated);
  ASSERT_EQ(cells.size(), 3u);
  EXPECT_TRUE(cells[0].within_time());
  EXPECT_EQ(cells[0].within_frames(), true);  // 6 frames against 6
  EXPECT_NEAR(cells[0].diff_ms(), -10, 1e-9);
  EXPECT_NEAR(cells[0].diff_frames(), -10 / (1000.0 / 60), 1e-9);
  EXPECT_FALSE(cells[1].within_time());
  EXPECT_EQ(cells[1].within_frames(), false);
  EXPECT_FALSE(cells[2].within_time());
  EXPECT_EQ(cells[2].within_frames(), false);
  EXPECT_NE(cells[2].missing.find("simulated"), std::string::npos) << cells[2].missing;
  const std::string md = twin_markdown(cells, "t", {});
  EXPECT_NE(md.find("**1 of 3 cells (33 %) within max(1 frame, 5 %) in time; 1 of 3 capped cells "
                    "(33 %) within one frame in frame counts**"),
            std::string::npos)
      << md;
  EXPECT_NE(twin_csv(cells).find("\"rtt_ms=40\",grid,60,0,lost,,,,,,,,,,no,no,"),
            std::string::npos)
      << twin_csv(cells);
}

// A frame-capped cell one frame apart is within in frame counts however the live frame's
// microseconds of lateness make its milliseconds come out, and the time column says that those
// milliseconds are more than a frame; two frames apart is within neither.
TEST(TwinCompare, AtAFrameCapOneFrameApartIsWithinToTheMicrosecond) {
  twinbench::ResultSet simulated = base(), emulated = base();
  const double frame = 1000.0 / 60;
  for (int i = 0; i < 3; ++i) add(simulated, "near", 60, 2 * frame);
  for (int i = 0; i < 3; ++i) add(emulated, "near", 60, 3 * frame + 0.007);  // 16.674 ms more
  for (int i = 0; i < 3; ++i) add(simulated, "far", 60, 2 * frame);
  for (int i = 0; i < 3; ++i) add(emulated, "far", 60, 4 * frame + 0.007);
  const auto cells = pair_cells("", simulated, emulated);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_GT(std::fabs(cells[0].diff_ms()), frame) << "more than a frame in milliseconds";
  EXPECT_EQ(cells[0].within_frames(), true);
  EXPECT_FALSE(cells[0].within_time());
  EXPECT_EQ(cells[1].within_frames(), false);
  EXPECT_FALSE(cells[1].within_time());
  const auto counts = count_within(cells);
  EXPECT_EQ(counts.capped, 2u);
  EXPECT_EQ(counts.within_frames, 1u);
  EXPECT_EQ(counts.within_time, 0u);
}

// Uncapped cells have no frame count to judge: the frame column is empty and they are not counted
// among the capped cells; time alone judges them.
TEST(TwinCompare, UncappedCellsAreJudgedInTimeOnly) {
  twinbench::ResultSet simulated = base(), emulated = base();
  for (int i = 0; i < 3; ++i) add(simulated, "near", 0, 100.0);
  for (int i = 0; i < 3; ++i) add(emulated, "near", 0, 104.0);  // 4 %
  for (int i = 0; i < 3; ++i) add(simulated, "far", 0, 100.0);
  for (int i = 0; i < 3; ++i) add(emulated, "far", 0, 110.0);  // 9 %, beyond 1 ms of frame work
  const auto cells = pair_cells("", simulated, emulated);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_FALSE(cells[0].within_frames().has_value());
  EXPECT_TRUE(cells[0].within_time());
  EXPECT_FALSE(cells[1].within_time());
  const auto counts = count_within(cells);
  EXPECT_EQ(counts.capped, 0u);
  EXPECT_EQ(counts.within_time, 1u);
  EXPECT_NE(twin_csv(cells).find(",near,100.000,100.000,100.000,104.000,104.000,104.000,-4.000,"
                                 "-3.85,-4.00,,yes,"),
            std::string::npos)
      << twin_csv(cells);
}

}  // namespace
}  // namespace tb::studies
