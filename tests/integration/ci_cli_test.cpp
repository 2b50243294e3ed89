// twinbench in a game's CI (docs/ci.md): `run` checks the scenario's expectations and a
// --baseline, `diff` pairs two result sets, both exit 1 naming what moved, and every verdict can
// be written as JUnit XML that validates against the schema CI systems read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_cli.hpp"
#include "support/child_process.hpp"
#include "support/junit_schema.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using tb::testing::run_cli;

// A 40 ms path; cooperative HTTPRequest (one 64 KiB chunk per frame) and C3Http (drains the
// socket), a ping and 512 KiB at 60 fps.
constexpr const char* kScenario =
    "name: \"game\"\n"
    "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
    "variants { name: \"c3_coop\" client: C3HTTP }\n"
    "frame_caps: [60]\n"
    "body_bytes: [0, 524288]\n"
    "runs: 3\nwarmups: 1\n"
    "network { link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20\n"
    "                 downlink_mbps: 50 uplink_mbps: 20 } }\n";

class CiCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-ci-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path scenario(const std::string& name, const std::string& extra) {
    std::ofstream(dir_ / name) << kScenario << extra;
    return dir_ / name;
  }
  int run(const fs::path& file, const std::string& out, std::string* err,
          std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run", file.string(), "-q", "--out", (dir_ / out).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, err);
  }
  fs::path dir_;
};

TEST_F(CiCli, HeldExpectationsExitZeroAndSaySo) {
  const auto file = scenario("held.textproto",
                             "expect { max_frames: 1000 }\n"
                             "expect { variants: \"c3_coop\" statistic: MAX max_ms: 10000 }\n");
  std::string err;
  ASSERT_EQ(run(file, "out", &err, {"--junit", (dir_ / "report.xml").string()}), 0) << err;
  EXPECT_NE(err.find("all 2 expectations held (6 checks over their cells)"), std::string::npos)
      << err;
  const std::string md = testing::file_text(dir_ / "out/results.md");
  EXPECT_NE(md.find("## Expectations"), std::string::npos) << md;
  EXPECT_EQ(md.find("breached"), std::string::npos) << md;
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "report.xml"), "");
  const std::string xml = testing::file_text(dir_ / "report.xml");
  EXPECT_NE(xml.find("tests=\"6\" failures=\"0\""), std::string::npos) << xml;
}

TEST_F(CiCli, ABreachedExpectationExitsOneNamingTheCellAndStillWritesTheResults) {
  // One frame is too few for any request on a 40 ms path; a 10 s bound holds.
  const auto file = scenario("breached.textproto",
                             "expect { variants: \"nat_coop\" body_bytes: 524288 max_frames: 1 }\n"
                             "expect { max_ms: 10000 }\n");
  std::string err;
  ASSERT_EQ(run(file, "out", &err, {"--junit", (dir_ / "report.xml").string()}), 1) << err;
  EXPECT_NE(err.find("expectation breached: expect[0] nat_coop, 60 fps, 512 KB: median <= 1 "
                     "frames required, median "),
            std::string::npos)
      << err;
  EXPECT_NE(err.find("1 of 5 expectation checks breached (expect[0])"), std::string::npos) << err;
  EXPECT_NE(testing::file_text(dir_ / "out/results.md").find("**breached**"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir_ / "out/results.json"));
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "report.xml"), "");
  EXPECT_NE(testing::file_text(dir_ / "report.xml").find("tests=\"5\" failures=\"1\""),
            std::string::npos);
}

TEST_F(CiCli, BadExpectationsAreInputErrorsWithFileAndLine) {
  const auto file = scenario("bad.textproto", "expect {\n  variants: \"nat_thr\" max_ms: 1 }\n");
  std::string err;
  EXPECT_EQ(run(file, "out", &err), 2);
  EXPECT_NE(err.find(file.string() + ":11: expect[0].variants[0]: expected the name of one of "
                                     "the scenario's variants, got \"nat_thr\""),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// The engine's chunk size stands for a model constant changed by a commit: HTTPRequest reads one
// chunk per frame, so 16 KiB chunks instead of 64 KiB slow its 512 KiB download by many frames,
// while its ping and C3Http (which drains the socket) do not move.
TEST_F(CiCli, DiffIsEmptyAgainstItselfAndFailsOnExactlyTheCellsAChangeMoves) {
  const auto base = scenario("base.textproto", "");
  const auto changed = scenario("changed.textproto", "download_chunk_size: 16384\n");
  std::string err, out;
  ASSERT_EQ(run(base, "base", &err), 0) << err;
  ASSERT_EQ(run(changed, "changed", &err), 0) << err;

  ASSERT_EQ(run_cli({"diff", (dir_ / "base").string(), (dir_ / "base/results.json").string(),
                     "--out", (dir_ / "self").string()},
                    &err, &out),
            0)
      << err;
  EXPECT_NE(err.find("no regression in 4 cells, 0 improved, 4 the same"), std::string::npos) << err;
  EXPECT_EQ(testing::file_text(dir_ / "self/diff.csv").find("regressed"), std::string::npos);

  ASSERT_EQ(run_cli({"diff", (dir_ / "base").string(), (dir_ / "changed").string(), "--junit",
                     (dir_ / "diff.xml").string()},
                    &err, &out),
            1)
      << err;
  EXPECT_NE(err.find("regressed: game nat_coop, 60 fps, 512 KB: median "), std::string::npos)
      << err;
  EXPECT_NE(err.find("1 of 4 cells regressed (nat_coop, 60 fps, 512 KB), 0 improved, 3 the same"),
            std::string::npos)
      << err;
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "diff.xml"), "");
  EXPECT_NE(testing::file_text(dir_ / "diff.xml").find("tests=\"4\" failures=\"1\""),
            std::string::npos);
  // The other way round the same cell improved: not a failure.
  EXPECT_EQ(run_cli({"diff", (dir_ / "changed").string(), (dir_ / "base").string()}, &err, &out),
            0)
      << err;
  EXPECT_NE(err.find("1 improved"), std::string::npos) << err;
}

TEST_F(CiCli, RunAgainstABaselineExitsOneOnARegression) {
  const auto base = scenario("base.textproto", "");
  const auto changed = scenario("changed.textproto", "download_chunk_size: 16384\n");
  std::string err;
  ASSERT_EQ(run(base, "base", &err), 0) << err;
  ASSERT_EQ(run(base, "again", &err, {"--baseline", (dir_ / "base").string()}), 0) << err;
  EXPECT_NE(err.find("no regression in 4 cells"), std::string::npos) << err;
  ASSERT_EQ(run(changed, "changed", &err,
                {"--baseline", (dir_ / "base").string(), "--junit", (dir_ / "r.xml").string()}),
            1)
      << err;
  EXPECT_NE(err.find("regressed against the baseline: game nat_coop, 60 fps, 512 KB"),
            std::string::npos)
      << err;
  EXPECT_NE(testing::file_text(dir_ / "changed/results.md").find("## Against the baseline"),
            std::string::npos);
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "r.xml"), "");
  // A wide enough tolerance lets the change through.
  EXPECT_EQ(run(changed, "tolerated", &err,
                {"--baseline", (dir_ / "base").string(), "--tolerance-pct", "1000"}),
            0)
      << err;
}

TEST_F(CiCli, AMissingBaselineIsBadInputBeforeAnythingRuns) {
  const auto base = scenario("base.textproto", "");
  std::string err;
  EXPECT_EQ(run(base, "out", &err, {"--baseline", (dir_ / "nowhere").string()}), 2);
  EXPECT_NE(err.find((dir_ / "nowhere").string()), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
  EXPECT_EQ(run_cli({"diff", (dir_ / "nowhere").string(), (dir_ / "neither").string()}, &err), 2);
}

TEST_F(CiCli, VersionNamesTheSimulator) {
  std::string out;
  EXPECT_EQ(run_cli({"--version"}, nullptr, &out), 0);
  EXPECT_EQ(out.rfind("twinbench " TWINBENCH_TEST_VERSION " (ns-3 3.37", 0), 0u) << out;
}

}  // namespace
}  // namespace tb
