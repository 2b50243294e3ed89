// Expectations, baseline diffs and JUnit reports over result sets built here, sample by sample.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "support/junit_schema.hpp"
#include "support/real_time.hpp"
#include "twinbench/verdicts/criterion.hpp"
#include "twinbench/verdicts/expectations.hpp"
#include "twinbench/verdicts/junit.hpp"
#include "twinbench/verdicts/result_diff.hpp"

namespace tb::verdicts {
namespace {

namespace fs = std::filesystem;

// A scenario of two variants at 60 fps and uncapped (frame work 2 ms), ping and 1 MB.
twinbench::ResultSet result_set() {
  twinbench::ResultSet r;
  auto& s = *r.mutable_scenario();
  s.set_name("game");
  s.add_variants()->set_name("nat_coop");
  s.add_variants()->set_name("c3_coop");
  s.add_frame_caps(60);
  s.add_frame_caps(0);
  s.add_body_bytes(0);
  s.add_body_bytes(1 << 20);
  s.mutable_frame_loop()->set_frame_work_ms(2);
  return r;
}

// Measured samples of one cell: one per entry of `frames`, each lasting frames x the frame, then
// `failures` failed ones.
void add_cell(twinbench::ResultSet& r, const std::string& variant, std::uint32_t fps,
              std::uint64_t bytes, const std::vector<double>& frames, int failures = 0) {
  const double frame_ms = fps ? 1000.0 / fps : 2.0;
  auto sample = [&, round = 0u]() mutable -> twinbench::Sample& {
    auto& x = *r.add_samples();
    x.set_scenario("game");
    x.set_variant(variant);
    x.set_fps(fps);
    x.set_body_bytes(bytes);
    x.set_round(round++);
    return x;
  };
  for (const double f : frames) {
    auto& x = sample();
    x.set_result("success");
    x.set_frames(static_cast<std::uint64_t>(f));
    x.set_elapsed_ms(f * frame_ms);
  }
  for (int i = 0; i < failures; ++i) {
    auto& x = sample();
    x.set_result("timeout");
    x.set_error("no response in 30 s");
  }
}

twinbench::ResultSet full_set() {
  twinbench::ResultSet r = result_set();
  add_cell(r, "nat_coop", 60, 0, {10, 11, 12, 13, 30});
  add_cell(r, "c3_coop", 60, 0, {8, 8, 9, 9, 9});
  add_cell(r, "nat_coop", 60, 1 << 20, {40, 41, 42, 43, 44});
  add_cell(r, "c3_coop", 60, 1 << 20, {20, 20, 20, 20, 20});
  add_cell(r, "nat_coop", 0, 0, {100, 100, 100});
  add_cell(r, "c3_coop", 0, 0, {90, 90, 90});
  return r;
}

TEST(Criterion, OneFrameOrFivePercentOfTheReference) {
  EXPECT_DOUBLE_EQ(allowed(100, 1000.0 / 60), 1000.0 / 60);  // a frame is more than 5 ms
  EXPECT_DOUBLE_EQ(allowed(1000, 1000.0 / 60), 50);           // 5 % is more than a frame
  EXPECT_TRUE(within(50, 1000, 16.7));
  EXPECT_FALSE(within(50.1, 1000, 16.7));
  EXPECT_TRUE(within(-50, 1000, 16.7));
  EXPECT_DOUBLE_EQ(allowed(40, 1, {.frames = 1, .percent = 5}), 2);  // frame counts: 5 % of 40
  twinbench::Scenario s;
  s.mutable_frame_loop()->set_frame_work_ms(3);
  EXPECT_DOUBLE_EQ(frame_ms(s, 50), 20);
  EXPECT_DOUBLE_EQ(frame_ms(s, 0), 3);
}

TEST(Expectations, EachSelectedCellAndBoundIsChecked) {
  twinbench::ResultSet r = full_set();
  auto& e = *r.mutable_scenario()->add_expect();
  e.add_variants("nat_coop");
  e.add_frame_caps(60);
  e.set_max_frames(42);
  e.set_max_ms(700);
  const auto checks = check_expectations(r);
  ASSERT_EQ(checks.size(), 4u);  // two cells (ping, 1 MB) x two bounds
  EXPECT_EQ(checks[0].body_bytes, 0u);
  EXPECT_EQ(checks[0].unit, "ms");
  EXPECT_DOUBLE_EQ(*checks[0].value, 12 * 1000.0 / 60);  // the median of 10..13, 30
  EXPECT_TRUE(checks[0].held());
  EXPECT_EQ(checks[1].unit, "frames");
  EXPECT_DOUBLE_EQ(*checks[1].value, 12);
  EXPECT_TRUE(checks[1].held());
  EXPECT_EQ(checks[2].body_bytes, 1u << 20);
  EXPECT_DOUBLE_EQ(*checks[2].value, 700);  // 42 frames: exactly the bound, held
  EXPECT_TRUE(checks[2].held());
  EXPECT_TRUE(checks[3].held());
  EXPECT_EQ(breached(checks), 0u);
  EXPECT_EQ(expectations_summary(checks), "all 1 expectations held (4 checks over their cells)");

  e.set_max_frames(41.5);
  const auto tighter = check_expectations(r);
  EXPECT_FALSE(tighter[3].held());
  EXPECT_EQ(tighter[3].cell(), "nat_coop, 60 fps, 1 MB");
  EXPECT_EQ(tighter[3].requirement(), "median <= 41.5 frames");
  EXPECT_EQ(tighter[3].outcome(), "median 42.0 frames");
  EXPECT_EQ(expectations_summary(tighter), "1 of 4 expectation checks breached (expect[0])");
}

TEST(Expectations, QuantileAndMaximumOfTheMeasuredSamples) {
  twinbench::ResultSet r = full_set();
  auto& max = *r.mutable_scenario()->add_expect();
  max.add_variants("nat_coop");
  max.add_frame_caps(60);
  max.add_body_bytes(0);
  max.set_statistic(twinbench::Expectation::MAX);
  max.set_max_frames(29);
  auto& p75 = *r.mutable_scenario()->add_expect();
  p75.add_variants("nat_coop");
  p75.add_frame_caps(60);
  p75.add_body_bytes(0);
  p75.set_statistic(twinbench::Expectation::QUANTILE);
  p75.set_quantile(0.75);
  p75.set_max_frames(13);
  const auto checks = check_expectations(r);
  ASSERT_EQ(checks.size(), 2u);
  EXPECT_EQ(checks[0].statistic, "max");
  EXPECT_DOUBLE_EQ(*checks[0].value, 30);  // the one slow request
  EXPECT_FALSE(checks[0].held());
  EXPECT_EQ(checks[1].statistic, "p75");
  EXPECT_DOUBLE_EQ(*checks[1].value, 13);
  EXPECT_TRUE(checks[1].held());
}

TEST(Expectations, AFailedRequestBreachesUnlessAllowed) {
  twinbench::ResultSet r = result_set();
  add_cell(r, "c3_coop", 60, 0, {8, 8, 8}, /*failures=*/1);
  auto& e = *r.mutable_scenario()->add_expect();
  e.set_max_frames(100);
  auto checks = check_expectations(r);
  ASSERT_EQ(checks.size(), 1u);
  EXPECT_FALSE(checks[0].held());
  EXPECT_NE(checks[0].outcome().find("1 of 4 requests failed (no response in 30 s)"),
            std::string::npos)
      << checks[0].outcome();
  e.set_allow_failures(true);
  checks = check_expectations(r);
  EXPECT_TRUE(checks[0].held());
}

TEST(Diff, AResultSetAgainstItselfIsAllTheSame) {
  const twinbench::ResultSet r = full_set();
  const ResultDiff d = diff_results(r, r);
  ASSERT_EQ(d.cells.size(), 6u);
  EXPECT_EQ(d.count(Change::same), 6u);
  EXPECT_FALSE(d.regressed());
  EXPECT_EQ(d.summary(),
            "no regression in 6 cells, 0 improved, 6 the same, 0 moved within max(1 frame, 5 %)");
}

TEST(Diff, CappedCellsAreJudgedInFramesUncappedInTime) {
  const twinbench::ResultSet base = full_set();
  twinbench::ResultSet next = result_set();
  add_cell(next, "nat_coop", 60, 0, {11, 12, 13, 14, 30});     // median +1 frame: within
  add_cell(next, "c3_coop", 60, 0, {10, 10, 11, 11, 11});      // median +2 frames: regressed
  add_cell(next, "nat_coop", 60, 1 << 20, {42, 43, 44, 45, 46});  // +2 of 42: 5 % is 2.1, within
  add_cell(next, "c3_coop", 60, 1 << 20, {17, 17, 17, 17, 17});   // -3 frames: improved
  add_cell(next, "nat_coop", 0, 0, {104, 104, 104});  // +8 ms of 200 ms: 5 % is 10, within
  add_cell(next, "c3_coop", 0, 0, {96, 96, 96});      // +12 ms of 180 ms: beyond 9, regressed
  const ResultDiff d = diff_results(base, next);
  ASSERT_EQ(d.cells.size(), 6u);
  EXPECT_EQ(d.cells[0].change, Change::within);
  EXPECT_EQ(d.cells[1].change, Change::regressed);
  EXPECT_EQ(d.cells[1].why(), "median 11.0 frames, baseline 9.0 (+2.0, allowed 1.0)");
  EXPECT_EQ(d.cells[2].change, Change::within);
  EXPECT_EQ(d.cells[3].change, Change::improved);
  EXPECT_EQ(d.cells[4].change, Change::within);
  EXPECT_EQ(d.cells[5].change, Change::regressed);
  EXPECT_TRUE(d.regressed());
  // A wider tolerance lets both through.
  EXPECT_FALSE(diff_results(base, next, {.frames = 2, .percent = 10}).regressed());
  // And none at all judges every move.
  const ResultDiff exact = diff_results(base, next, {.frames = 0, .percent = 0});
  EXPECT_EQ(exact.count(Change::regressed), 5u);
}

TEST(Diff, MoreFailuresAndLostCellsAreRegressionsNewCellsAreNot) {
  const twinbench::ResultSet base = full_set();
  twinbench::ResultSet next = result_set();
  add_cell(next, "nat_coop", 60, 0, {10, 11, 12, 13, 30});
  add_cell(next, "c3_coop", 60, 0, {8, 8, 9, 9}, /*failures=*/1);  // a request now fails
  add_cell(next, "nat_coop", 60, 1 << 20, {40, 41, 42, 43, 44});
  add_cell(next, "c3_coop", 60, 1 << 20, {20, 20, 20, 20, 20});
  add_cell(next, "nat_coop", 0, 0, {100, 100, 100});
  add_cell(next, "c3_thr", 0, 0, {90, 90, 90});  // c3_coop uncapped is gone; c3_thr is new
  const ResultDiff d = diff_results(base, next);
  ASSERT_EQ(d.cells.size(), 7u);
  EXPECT_EQ(d.cells[1].change, Change::regressed);
  EXPECT_EQ(d.cells[5].change, Change::added);
  EXPECT_EQ(d.cells[6].change, Change::removed);
  EXPECT_EQ(d.cells[6].variant, "c3_coop");
  EXPECT_EQ(d.count(Change::same), 4u);
  EXPECT_TRUE(d.regressed());
  // The other way round, fewer failures are an improvement.
  EXPECT_EQ(diff_results(next, base).cells[1].change, Change::improved);
}

// The report written to dir/report.xml and checked against the schema; empty when valid.
std::string schema_errors(const std::string& xml, const fs::path& dir) {
  std::ofstream(dir / "report.xml") << xml;
  return tb::testing::junit_schema_errors(dir / "report.xml");
}

TEST(JUnit, ReportsValidateAgainstTheSchemaWhateverTheText) {
  if (std::system("xmllint --version > /dev/null 2>&1") != 0)
    TB_CANNOT_JUDGE("no xmllint (Debian package libxml2-utils, which scripts/setup.sh installs)");
  const fs::path dir = fs::temp_directory_path() / ("twinbench-junit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  twinbench::ResultSet r = full_set();
  auto& e = *r.mutable_scenario()->add_expect();
  e.set_max_frames(12);
  r.mutable_samples(0)->set_variant("nat_coop");
  const auto checks = check_expectations(r);
  twinbench::ResultSet next = full_set();
  next.mutable_samples(0)->set_elapsed_ms(1e6);
  const auto suites = std::vector<JUnitSuite>{
      expectations_junit(checks, "game"), diff_junit(diff_results(full_set(), next), "diff"),
      // Markup, quotes, a control byte and invalid UTF-8, as an error message may carry.
      JUnitSuite{"odd <text> & \"quotes\"",
                 {JUnitCase{"c", "bell\x07 and \xff\xfe bytes", "fails: a < b & c > 'd'", "x\x01y"},
                  JUnitCase{"c", "passes", std::nullopt, ""}}}};
  const std::string xml = junit_xml(suites);
  EXPECT_EQ(schema_errors(xml, dir), "") << xml;
  EXPECT_NE(xml.find("&lt;text&gt; &amp; &quot;quotes&quot;"), std::string::npos);
  EXPECT_EQ(xml.find('\x07'), std::string::npos);
  EXPECT_NE(xml.find("failures=\"5\""), std::string::npos) << xml;  // the totals line
  // Something the schema refuses is refused, or the check above could not fail.
  EXPECT_NE(schema_errors("<testsuites tests=\"1\"><testcase name=\"x\"/></testsuites>", dir), "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb::verdicts
