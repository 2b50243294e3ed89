#include "twinbench/scenario/report.hpp"

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

void add(twinbench::ResultSet& r, const char* variant, std::uint32_t fps, std::uint64_t bytes,
         bool warmup, double ms, std::uint64_t frames, const char* error = nullptr) {
  auto* s = r.add_samples();
  s->set_scenario(r.scenario().name());
  s->set_variant(variant);
  s->set_fps(fps);
  s->set_body_bytes(bytes);
  s->set_warmup(warmup);
  s->set_elapsed_ms(ms);
  s->set_frames(frames);
  s->set_result(error ? "error" : "success");
  if (error) s->set_error(error);
}

// Scenario order c3_coop, nat_coop (the published columns put nat_coop first); caps 60 then 30.
// Samples are added out of order, with warmups that would dominate every statistic if counted.
twinbench::ResultSet latency_results() {
  twinbench::ResultSet r;
  auto& sc = *r.mutable_scenario();
  sc.set_name("lat");
  sc.set_engine(twinbench::GODOT4);
  sc.set_download_chunk_size(65536);
  sc.set_runs(3);
  sc.set_warmups(1);
  for (const char* v : {"c3_coop", "nat_coop"}) sc.add_variants()->set_name(v);
  sc.add_frame_caps(60);
  sc.add_frame_caps(30);
  sc.add_body_bytes(0);
  r.mutable_run()->set_backend("sim");
  r.mutable_run()->set_seed(7);
  r.mutable_run()->set_keep_alive(true);

  add(r, "nat_coop", 30, 0, true, 999, 99);
  add(r, "c3_coop", 30, 0, true, 999, 99);
  for (double ms : {2.5, 1.5, 3.5}) add(r, "nat_coop", 30, 0, false, ms, 1);
  for (int i = 0; i < 3; ++i)
    add(r, "c3_coop", 30, 0, false, 0, 0, i ? "later error" : "connection refused");
  add(r, "c3_coop", 60, 0, true, 999, 99);
  add(r, "nat_coop", 60, 0, false, 40, 3);
  add(r, "nat_coop", 60, 0, false, 0, 0, "timeout");
  add(r, "nat_coop", 60, 0, false, 50, 4);
  add(r, "c3_coop", 60, 0, false, 10, 1);
  add(r, "c3_coop", 60, 0, false, 30, 2);
  add(r, "c3_coop", 60, 0, false, 20, 2);
  return r;
}

TEST(ResultsCsv, RowsOrderedLikeThePublishedCsvWithoutWarmupsOrFailures) {
  // c3_coop@60: {10,20,30} -> median 20, q1 15, q3 25. nat_coop@60: {40,50} (one failure) ->
  // 45, 42.5, 47.5. c3_coop@30: all failed -> empty. nat_coop@30: {1.5,2.5,3.5} -> 2.5, 2, 3.
  EXPECT_EQ(tb::scenario::results_csv(latency_results()),
            "scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs\n"
            "lat,60,0,c3_coop,20.000,10.000,15.000,25.000,30.000,3\n"
            "lat,60,0,nat_coop,45.000,40.000,42.500,47.500,50.000,2\n"
            "lat,30,0,c3_coop,,,,,,0\n"
            "lat,30,0,nat_coop,2.500,1.500,2.000,3.000,3.500,3\n");
}

TEST(ResultsCsv, EmptyResultSetIsJustTheHeader) {
  EXPECT_EQ(tb::scenario::results_csv({}),
            "scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs\n");
}

TEST(ResultsMarkdown, FrameRateSweep) {
  const std::string md = tb::scenario::results_markdown(latency_results());
  EXPECT_THAT(md, HasSubstr("# twinbench results: lat\n"));
  EXPECT_THAT(
      md, HasSubstr("backend sim, server (built-in), server nodelay off, keep_alive on, seed 7, "
                    "engine GODOT4, chunk size 65536, runs 3, warmups 1"));
  // Published column order (nat_coop before c3_coop); frame rates as rows.
  EXPECT_THAT(md, HasSubstr("### Median time (ms)\n\n"
                            "| Frame rate | nat_coop | c3_coop |\n"
                            "|---|---:|---:|\n"
                            "| 60 fps | 45.0 | 20.0 |\n"
                            "| 30 fps | 2.5 | failed |\n"));
  EXPECT_THAT(md, HasSubstr("### Median frames\n\n"
                            "| Frame rate | nat_coop | c3_coop |\n"
                            "|---|---:|---:|\n"
                            "| 60 fps | 3.5 | 2.0 |\n"
                            "| 30 fps | 1.0 | failed |\n"));
  EXPECT_THAT(
      md, HasSubstr(
              "| c3_coop | 60 fps | 10.0 | 15.0 | 20.0 | 25.0 | 30.0 | 29.0 | 29.8 | 3 | 2.0 |\n"));
  EXPECT_THAT(md, HasSubstr("| c3_coop | 30 fps | | | | | | | | 0 | |\n"));
  EXPECT_THAT(md, HasSubstr("| Cell | Variant | failed | first error |\n|---|---|---:|---|\n"
                            "| 60 fps | nat_coop | 1 | timeout |\n"
                            "| 30 fps | c3_coop | 3 | connection refused |\n"));
  EXPECT_THAT(md, Not(HasSubstr("999")));  // warmups
}

TEST(ResultsMarkdown, StatesTheClientsWakeupLatenessOnlyWhereTheRunMeasuredIt) {
  auto r = latency_results();
  EXPECT_THAT(tb::scenario::results_markdown(r), Not(HasSubstr("wake-ups")));  // simulated
  auto& timing = *r.mutable_run()->mutable_host_timing();
  timing.set_wakeups(1200);
  timing.set_p50_us(31);
  timing.set_p99_us(140);
  timing.set_max_us(2765.9);
  EXPECT_THAT(tb::scenario::results_markdown(r),
              HasSubstr("Client wake-ups: 1200 timed sleeps ended late by p50 31 us, p99 140 us, "
                        "max 2766 us"));
}

TEST(ResultsMarkdown, BodySizeRowsAndScenarioColumnOrder) {
  twinbench::ResultSet r;
  r.mutable_scenario()->set_name("dl");
  for (const char* v : {"zeta", "alpha"}) r.mutable_scenario()->add_variants()->set_name(v);
  r.mutable_scenario()->add_frame_caps(60);
  for (std::uint64_t b : {10240u, 1048576u, 1500u}) r.mutable_scenario()->add_body_bytes(b);
  for (std::uint64_t b : {1500u, 1048576u, 10240u})
    for (const char* v : {"alpha", "zeta"}) add(r, v, 60, b, false, 1, 1);
  const std::string md = tb::scenario::results_markdown(r);
  EXPECT_THAT(md,
              HasSubstr("| Body size | zeta | alpha |\n|---|---:|---:|\n"
                        "| 10 KB | 1.0 | 1.0 |\n| 1 MB | 1.0 | 1.0 |\n| 1500 B | 1.0 | 1.0 |\n"));
  EXPECT_THAT(md, Not(HasSubstr("Failures")));
}

TEST(ResultsJson, RoundTripsAndKeepsProtoNames) {
  const auto r = latency_results();
  const std::string json = tb::scenario::results_json(r);
  EXPECT_EQ(json, tb::scenario::results_json(r));
  EXPECT_THAT(json, HasSubstr("\"body_bytes\""));
  EXPECT_THAT(json, HasSubstr("\"reused_connection\": false"));  // zero values are printed
  twinbench::ResultSet back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(r, back));
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("twinbench-report-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> listing(const fs::path& d) const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(d)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  fs::path dir_;
};

TEST_F(TempDir, WriteFileAtomicallyCreatesDirectoriesAndLeavesNoTemporaryFile) {
  const fs::path file = dir_ / "a" / "b" / "out.txt";
  tb::scenario::write_file_atomically(file, "first");
  tb::scenario::write_file_atomically(file, "second");
  EXPECT_EQ(read(file), "second");
  EXPECT_EQ(listing(file.parent_path()), std::vector<std::string>{"out.txt"});
}

TEST_F(TempDir, WriteFileAtomicallyFailsUnderARegularFile) {
  fs::create_directories(dir_);
  tb::scenario::write_file_atomically(dir_ / "blocker", "a regular file");
  const fs::path file = dir_ / "blocker" / "out.txt";
  try {
    tb::scenario::write_file_atomically(file, "x");
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(file.string()));
  }
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"blocker"});
}

TEST_F(TempDir, WriteFileAtomicallyFailingRenameRemovesTheTemporaryFile) {
  fs::create_directories(dir_ / "target_is_a_dir" / "child");
  EXPECT_THROW(tb::scenario::write_file_atomically(dir_ / "target_is_a_dir", "x"),
               std::runtime_error);
  EXPECT_EQ(listing(dir_), std::vector<std::string>{"target_is_a_dir"});
}

TEST_F(TempDir, WriteResultsWritesThreeFiles) {
  const auto r = latency_results();
  tb::scenario::write_results(r, dir_ / "run");
  EXPECT_EQ(listing(dir_ / "run"),
            (std::vector<std::string>{"results.csv", "results.json", "results.md"}));
  EXPECT_EQ(read(dir_ / "run" / "results.csv"), tb::scenario::results_csv(r));
  EXPECT_EQ(read(dir_ / "run" / "results.md"), tb::scenario::results_markdown(r));
}

}  // namespace
