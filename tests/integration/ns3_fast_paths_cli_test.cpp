// The ns-3 fast paths (ns3_fast_paths/) change how fast a simulation runs, never what
// it gives: the real binary run on a lossy path, where SACK recovery exercises the scoreboard
// stand-ins, writes byte-identical result files with TWINBENCH_NS3_FAST_PATHS=0 (ns-3's own
// functions throughout) and =1. A value other than 0 or 1 is refused.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/child_process.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;


// 1 MiB downloads over 40 ms and 20 Mbit/s with `loss` each way, CUBIC and SACK on both sides.
void write_scenario(const fs::path& file, double loss) {
  std::ofstream(file) << "name: \"lossy\"\nengine: GODOT4\n"
                         "variants { name: \"c3_coop\" client: C3HTTP threaded: false session: false }\n"
                         "variants { name: \"c3s_coop\" client: C3HTTP threaded: false session: true }\n"
                         "frame_caps: [0, 60]\nbody_bytes: [1048576]\nruns: 4\nwarmups: 0\n"
                         "frame_loop { frame_work_ms: 1 }\n"
                         "network { link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20\n"
                         "  downlink_mbps: 20 uplink_mbps: 20 loss_rate: "
                      << loss << " } }\n";
}

// `twinbench run scenario` with `env` (TWINBENCH_NS3_FAST_PATHS=...); its results.md, .csv, .json.
std::string run(const fs::path& work, const fs::path& scenario, const std::string& env,
                const std::string& name) {
  const fs::path out = work / name;
  testing::ChildProcess twinbench(
      TWINBENCH_BINARY, {"run", scenario.string(), "--jobs", "2", "--quiet", "--out", out.string()},
      work / (name + "-logs"), {env});
  const auto status = twinbench.wait_for(300s);
  EXPECT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
      << twinbench.stderr_text();
  return testing::file_text(out / "results.md") + testing::file_text(out / "results.csv") +
         testing::file_text(out / "results.json");
}

TEST(Ns3FastPathsCli, ALossyRunGivesTheSameFilesWithThemOnAndOff) {
  const testing::TempDir work("twinbench-fast-paths");
  write_scenario(work.path() / "lossy.textproto", 0.01);
  write_scenario(work.path() / "clean.textproto", 0);
  const fs::path lossy = work.path() / "lossy.textproto";
  const std::string on = run(work.path(), lossy, "TWINBENCH_NS3_FAST_PATHS=1", "on");
  const std::string off = run(work.path(), lossy, "TWINBENCH_NS3_FAST_PATHS=0", "off");
  ASSERT_FALSE(on.empty());
  EXPECT_TRUE(on == off) << "results differ with the fast paths on and off";
  // The scoreboard's group alone off (as scripts/fast-path-gains.sh measures it), the others on.
  EXPECT_TRUE(on == run(work.path(), lossy, "TWINBENCH_NS3_FAST_PATHS_OFF=scoreboard,rng-stream",
                        "some-off"));
  // The loss took effect (else the recovery code would not have run).
  EXPECT_NE(
      on, run(work.path(), work.path() / "clean.textproto", "TWINBENCH_NS3_FAST_PATHS=1", "clean"));
}

TEST(Ns3FastPathsCli, AnUnknownGroupIsRefused) {
  const testing::TempDir work("twinbench-fast-paths-group");
  testing::ChildProcess twinbench(TWINBENCH_BINARY, {"run", "--runs", "1", "--quiet"},
                                  work.path() / "logs",
                                  {"TWINBENCH_NS3_FAST_PATHS_OFF=scoreboard,warp-drive"});
  const auto status = twinbench.wait_for(60s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << *status;
  EXPECT_NE(twinbench.stderr_text().find("expected groups among scoreboard, create-option"),
            std::string::npos)
      << twinbench.stderr_text();
  EXPECT_NE(twinbench.stderr_text().find("got \"warp-drive\""), std::string::npos);
}

TEST(Ns3FastPathsCli, AValueOtherThanZeroOrOneIsRefused) {
  const testing::TempDir work("twinbench-fast-paths-bad");
  testing::ChildProcess twinbench(TWINBENCH_BINARY, {"run", "--runs", "1", "--quiet"},
                                  work.path() / "logs", {"TWINBENCH_NS3_FAST_PATHS=off"});
  const auto status = twinbench.wait_for(60s);
  ASSERT_TRUE(status);
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 2) << *status;
  EXPECT_NE(twinbench.stderr_text().find("TWINBENCH_NS3_FAST_PATHS=off: expected 0 (off) or 1 (on)"),
            std::string::npos)
      << twinbench.stderr_text();
}

}  // namespace
}  // namespace tb
