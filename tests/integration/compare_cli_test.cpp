// `twinbench compare --emulated-from DIR`: the simulation judged against an earlier compare's
// recorded emulated runs, without the emulated path (so without root). The recording here is a
// simulated run placed where compare keeps its emulated results: judged against itself, every
// cell must be within with a difference of zero; a recording of another scenario is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "run_cli.hpp"
#include "support/child_process.hpp"
#include "support/junit_schema.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using tb::testing::run_cli;

class CompareEmulatedFrom : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-compare-" + std::to_string(::getpid()));
    scenario_ = dir_ / "twins.textproto";
    recorded_ = dir_ / "recorded";
    out_ = dir_ / "out";
    fs::create_directories(dir_);
    std::ofstream(scenario_)
        << "name: \"twins\"\n"
           "variants { name: \"c3_coop\" client: C3HTTP }\n"
           "variants { name: \"nat_thr\" client: HTTP_REQUEST threaded: true }\n"
           "frame_caps: [60]\n"
           "body_bytes: [0, 102400]\n"
           "runs: 2\nwarmups: 1\n"
           "network { link { client_to_server_delay_ms: 10 server_to_client_delay_ms: 10\n"
           "                 downlink_mbps: 50 uplink_mbps: 20 } }\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A simulated run of the scenario (with `extra` options), recorded as compare records its
  // emulated runs: <recorded>/points/all/emulated/results.json.
  void record(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"run", scenario_.string(), "--backend", "sim", "-q",
                                     "--out", (dir_ / "run").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(run_cli(args), 0);
    // Marked as the emulated run it stands in for (compare refuses any other backend).
    auto results = scenario::read_results_json(dir_ / "run/results.json");
    results.mutable_run()->set_backend("emulated");
    scenario::write_file_atomically(recorded_ / "points/all/emulated/results.json",
                                    scenario::results_json(results));
  }

  int compare(std::string* err, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"compare", scenario_.string(), "--emulated-from",
                                     recorded_.string(), "-q", "--out", out_.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, err);
  }

  fs::path dir_, scenario_, recorded_, out_;
};

TEST_F(CompareEmulatedFrom, TheSimulationAgainstItsOwnRecordingIsWithinEverywhere) {
  record({});
  std::string err;
  ASSERT_EQ(compare(&err, {"--junit", (dir_ / "compare.xml").string()}), 0) << err;
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "compare.xml"), "");
  EXPECT_NE(testing::file_text(dir_ / "compare.xml").find("tests=\"4\" failures=\"0\""),
            std::string::npos);
  const std::string md = testing::file_text(out_ / "compare.md");
  EXPECT_NE(md.find("**4 of 4 cells (100 %) within"), std::string::npos) << md;
  EXPECT_NE(md.find("--emulated-from"), std::string::npos) << md;
  // Every row's difference is zero: the same deterministic simulation on both sides.
  std::istringstream csv(testing::file_text(out_ / "compare.csv"));
  std::string line;
  std::getline(csv, line);  // header
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    EXPECT_NE(line.find(",0.000,0.00,0.00,yes,"), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 4);
}

TEST_F(CompareEmulatedFrom, ARecordingOfOtherRoundsOrAnotherSeedIsRefusedNamingTheField) {
  record({"--runs", "1"});  // compare would run 2 rounds
  std::string err;
  EXPECT_EQ(compare(&err), 2) << err;
  EXPECT_NE(err.find("points/all/emulated/results.json: scenario: expected"), std::string::npos)
      << err;
  EXPECT_NE(err.find("runs: 2 -> 1"), std::string::npos) << err;  // the field that differs
  EXPECT_FALSE(fs::exists(out_ / "compare.csv"));
  fs::remove_all(recorded_);
  record({});
  EXPECT_EQ(compare(&err, {"--seed", "2"}), 2) << err;
  EXPECT_NE(err.find("results.json: run.seed: expected 2"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out_ / "compare.csv"));
}

TEST_F(CompareEmulatedFrom, AMissingRecordingExitsTwoNamingTheFileOrTheOption) {
  std::string err;
  EXPECT_EQ(compare(&err), 2) << err;  // no such directory
  EXPECT_NE(err.find("--emulated-from"), std::string::npos) << err;
  fs::create_directories(recorded_);
  EXPECT_EQ(compare(&err), 2) << err;
  EXPECT_NE(err.find("points/all/emulated/results.json: cannot read"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(out_ / "compare.csv"));
}

}  // namespace
}  // namespace tb
