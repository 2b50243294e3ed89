// The simulated backend end to end: determinism of the result files, and agreement with live
// loopback runs on frame counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <string>

#include "commands.hpp"
#include "live_backend.hpp"
#include "sim_backend.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/load.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class SimRun : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-simrun-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "lossy.textproto") <<
        "name: \"lossy\"\n"
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
    std::vector<std::string> args = {"twinbench", "run", (dir_ / "lossy.textproto").string(), "--backend", "sim",
                                     "-q", "--out", (dir_ / name).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    ::testing::internal::CaptureStdout();
    const int code = app::main_with_args(args);
    ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(code, 0);
    return {slurp(dir_ / name / "results.json"), slurp(dir_ / name / "results.csv")};
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

// Six variants over live loopback and over a simulated loopback-like path (tens of microseconds,
// 10 Gbit/s, a 64 KiB MTU like Linux's lo): every cell takes the same number of frames, with the
// server's Nagle on (the live server's default) and off. With Nagle on, the response's second write
// waits for the ACK of the first; Linux's quick-ACK and pingpong rules decide when that ACK goes,
// and the simulation follows them (docs/tcp-model.md): here no stall, since each connection's
// requests are fresh or come long (> ato) after its previous response, as the other variants run
// in between.
TEST(SimVersusLive, FrameCountsAgreeOnALoopbackLikePath) {
  for (const bool nodelay : {false, true}) {
    SCOPED_TRACE(nodelay ? "server nodelay" : "server Nagle on");
    twinbench::Scenario s = scenario::parse_scenario(std::string(R"(
        name: "loopback"
        variants { name: "c3_coop"  client: C3HTTP }
        variants { name: "c3_thr"   client: C3HTTP threaded: true }
        variants { name: "c3s_coop" client: C3HTTP session: true }
        variants { name: "c3s_thr"  client: C3HTTP threaded: true session: true }
        variants { name: "nat_coop" client: HTTP_REQUEST }
        variants { name: "nat_thr"  client: HTTP_REQUEST threaded: true }
        frame_caps: [60, 30]
        body_bytes: [0, 10240, 1048576]
        runs: 3
        warmups: 1
        network {
          link { client_to_server_delay_ms: 0.02 server_to_client_delay_ms: 0.02
                 downlink_mbps: 10000 uplink_mbps: 10000 mtu_bytes: 65535 }
          server_tcp { nodelay: )") + (nodelay ? "true" : "false") + R"( }
        }
    )", "loopback");

    live::ServerOptions server_options;
    server_options.nodelay = nodelay;
    live::LiveServer server(server_options);
    server.start();
    runner::RunOptions options;
    options.request_timeout = 30s;
    options.server_nodelay = nodelay;
    twinbench::ResultSet live_results;
    {
      app::LiveBackend live;
      options.base_url = server.base_url();
      live_results = runner::run_scenario(s, live.backend(), options);
    }
    options.base_url.clear();
    const auto sim_results = app::run_simulated(s, options, 1);

    // Live loopback races the kernel's connect against the next poll within a frame, so single
    // live samples may be a frame short; each cell's median must agree (3 measured runs).
    ASSERT_EQ(live_results.samples_size(), sim_results.samples_size());
    std::map<std::string, std::vector<std::uint64_t>> live_frames, sim_frames;
    for (int i = 0; i < live_results.samples_size(); ++i) {
      const auto& l = live_results.samples(i);
      const auto& m = sim_results.samples(i);
      ASSERT_EQ(l.variant(), m.variant());
      EXPECT_EQ(l.result(), "success") << l.error();
      EXPECT_EQ(m.result(), "success") << m.error();
      if (l.warmup()) continue;
      const std::string cell = l.variant() + " at " + std::to_string(l.fps()) + " fps, " +
                               std::to_string(l.body_bytes()) + " B";
      live_frames[cell].push_back(l.frames());
      sim_frames[cell].push_back(m.frames());
    }
    for (auto& [cell, counts] : live_frames) {
      auto& simulated = sim_frames[cell];
      std::sort(counts.begin(), counts.end());
      std::sort(simulated.begin(), simulated.end());
      EXPECT_EQ(counts[counts.size() / 2], simulated[simulated.size() / 2]) << cell;
    }
  }
}

}  // namespace
}  // namespace tb
