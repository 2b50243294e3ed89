// The command line: bad input gives a clear error, exit code 2, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "commands.hpp"
#include "run_cli.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  int run(std::vector<std::string> args, std::string* err) {
    return tb::testing::run_cli(std::move(args), err);
  }
  fs::path dir_;
};

TEST_F(Cli, MalformedScenarioNamesFileLineAndField) {
  const auto file = write("bad.textproto",
                          "name: \"x\"\n"
                          "variants { name: \"c3_coop\" client: C3HTTP }\n"
                          "frame_caps: [60]\n"
                          "body_bytes: [0]\n"
                          "runs: 0\n");
  std::string err;
  EXPECT_EQ(run({"run", file.string(), "--out", (dir_ / "out").string()}, &err), 2);
  EXPECT_NE(err.find(file.string() + ":5"), std::string::npos) << err;
  EXPECT_NE(err.find("runs"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

TEST_F(Cli, SyntaxErrorNamesTheLine) {
  const auto file = write("syntax.textproto", "name: \"x\"\nruns 25\n");
  std::string err;
  EXPECT_EQ(run({"run", file.string()}, &err), 2);
  EXPECT_NE(err.find(file.string() + ":2"), std::string::npos) << err;
}

TEST_F(Cli, MissingFileAndUnknownOptionsAreBadInput) {
  std::string err;
  EXPECT_EQ(run({"run", (dir_ / "nope.textproto").string()}, &err), 2);
  EXPECT_NE(err.find("nope.textproto"), std::string::npos) << err;
  EXPECT_EQ(run({"run", "x", "--backend", "carrier-pigeon"}, &err), 2);
  EXPECT_EQ(run({"frobnicate"}, &err), 2);
}

TEST_F(Cli, SimulationNeedsANetworkAndAFrameTimeWhenUncapped) {
  const std::string head =
      "name: \"x\"\nvariants { name: \"c3_coop\" client: C3HTTP }\nbody_bytes: [0]\nruns: 1\n";
  const auto no_network = write("no_network.textproto", head + "frame_caps: [60]\n");
  std::string err;
  EXPECT_EQ(run({"run", no_network.string(), "--backend", "sim"}, &err), 2);
  EXPECT_NE(err.find("network"), std::string::npos) << err;
  const auto uncapped =
      write("uncapped.textproto",
            head + "frame_caps: [0]\nnetwork { link { downlink_mbps: 10 uplink_mbps: 10 } }\n");
  EXPECT_EQ(run({"run", uncapped.string(), "--backend", "sim"}, &err), 2);
  EXPECT_NE(err.find("frame_loop.frame_work_ms"), std::string::npos) << err;
  const auto bad_link =
      write("bad_link.textproto",
            head + "frame_caps: [60]\nnetwork { link { downlink_mbps: 0 uplink_mbps: 10 } }\n");
  EXPECT_EQ(run({"run", bad_link.string(), "--backend", "sim"}, &err), 2);
  EXPECT_NE(err.find("bad_link.textproto:"), std::string::npos) << err;
  EXPECT_NE(err.find("downlink_mbps"), std::string::npos) << err;
}

TEST_F(Cli, DefaultIsThePublishedLatencyScenarioInSimulation) {
  std::string err;
  ASSERT_EQ(run({"run", "--out", (dir_ / "default").string(), "-q"}, &err), 0) << err;
  std::ifstream csv(dir_ / "default" / "results.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(row.rfind("latency,0,0,", 0), 0u) << row;  // uncapped first, ping
  std::ifstream json(dir_ / "default" / "results.json");
  const std::string text((std::istreambuf_iterator<char>(json)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"backend\": \"sim\""), std::string::npos);
}

TEST_F(Cli, RunsAScenarioAgainstItsOwnServerAndWritesResults) {
  const auto file = write("tiny.textproto",
                          "name: \"tiny\"\nengine: GODOT4\n"
                          "variants { name: \"c3_coop\" client: C3HTTP }\n"
                          "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
                          "frame_caps: [120]\nbody_bytes: [0, 20480]\nruns: 2\nwarmups: 1\n");
  std::string err;
  ASSERT_EQ(run({"run", file.string(), "--backend", "live", "--out", (dir_ / "out").string(), "-q"},
                &err),
            0)
      << err;
  for (const char* name : {"results.json", "results.csv", "results.md"}) {
    EXPECT_TRUE(fs::exists(dir_ / "out" / name)) << name;
  }
  std::ifstream csv(dir_ / "out" / "results.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs");
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 4);  // 2 sizes x 2 variants
}

}  // namespace
}  // namespace tb
