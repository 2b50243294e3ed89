// The simulated backend end to end: determinism of the result files.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "support/child_process.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;


class SimRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-simrun-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "lossy.textproto")
        << "name: \"lossy\"\n"
           "variants { name: \"c3_coop\" client: C3HTTP }\n"
           "variants { name: \"c3s_thr\" client: C3HTTP threaded: true session: true }\n"
           "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
           "frame_caps: [60, 30]\n"
           "body_bytes: [0, 409600]\n"
           "runs: 3\nwarmups: 1\n"
           "session_scope: PER_FRAME_CAP\n"
           "network {\n"
           "  link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20\n"
           "         downlink_mbps: 50 uplink_mbps: 20 loss_rate: 0.02 jitter_ms: 2 }\n"
           "}\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs the CLI and returns results.json + results.csv.
  std::pair<std::string, std::string> run(const std::string& name, std::vector<std::string> extra) {
    std::vector<std::string> args = {"twinbench",
                                     "run",
                                     (dir_ / "lossy.textproto").string(),
                                     "--backend",
                                     "sim",
                                     "-q",
                                     "--out",
                                     (dir_ / name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    ::testing::internal::CaptureStdout();
    const int code = app::main_with_args(args);
    ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(code, 0);
    return {testing::file_text(dir_ / name / "results.json"),
            testing::file_text(dir_ / name / "results.csv")};
  }
  fs::path dir_;
};

TEST_F(SimRun, SameSeedGivesByteIdenticalFilesAcrossRunsAndJobs) {
  const auto first = run("a", {"--seed", "7", "--jobs", "1"});
  const auto again = run("b", {"--seed", "7", "--jobs", "1"});
  const auto parallel = run("c", {"--seed", "7", "--jobs", "2"});
  ASSERT_FALSE(first.first.empty());
  EXPECT_EQ(first, again);
  EXPECT_EQ(first, parallel);
  // The seed drives the loss and jitter, so another seed gives other samples.
  const auto other = run("d", {"--seed", "8", "--jobs", "2"});
  EXPECT_NE(first.first, other.first);
}

// However loaded the machine: with processes spinning on every core, and more worker processes
// than cores, the parts finish and stream their samples in other orders and at other times; the
// files are the same. (Each spinner ends when killed, or after 120 s by its own alarm.)
TEST_F(SimRun, ALoadedMachineGivesTheSameFiles) {
  const auto quiet = run("quiet", {"--seed", "7", "--jobs", "2"});
  std::vector<pid_t> spinners;
  const long cores = std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN));
  for (long i = 0; i < cores; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      ::alarm(120);
      while (true) asm volatile("" ::: "memory");  // a core's worth of work, not optimised away
    }
    spinners.push_back(pid);
  }
  const auto loaded = run("loaded", {"--seed", "7", "--jobs", "4"});
  for (const pid_t pid : spinners) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  ASSERT_FALSE(quiet.first.empty());
  EXPECT_EQ(quiet, loaded);
}

}  // namespace
}  // namespace tb
