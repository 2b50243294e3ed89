// Scenarios on the emulated path against the same scenarios in simulation: the client models and
// server core over real kernel TCP give the frame counts the simulation gives, and Nagle against
// delayed ACK stalls a kept-alive exchange as the kernel does.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include <gmock/gmock.h>

#include "twinbench/emulated/emulated_run.hpp"
#include "path_fixture.hpp"
#include "support/real_time.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/stats.hpp"

namespace tb {
namespace {

using Cell = std::tuple<std::string, std::uint32_t, std::uint64_t>;  // variant, fps, bytes

std::map<Cell, double> median_frames(const twinbench::ResultSet& results) {
  std::map<Cell, std::vector<double>> frames;
  for (const auto& s : results.samples()) {
    EXPECT_EQ(s.result(), "success") << s.variant() << " " << s.error();
    if (!s.warmup())
      frames[{s.variant(), s.fps(), s.body_bytes()}].push_back(static_cast<double>(s.frames()));
  }
  std::map<Cell, double> medians;
  for (auto& [cell, f] : frames) {
    std::sort(f.begin(), f.end());
    medians[cell] = f.size() % 2 ? f[f.size() / 2] : (f[f.size() / 2 - 1] + f[f.size() / 2]) / 2;
  }
  return medians;
}

TEST(EmulatedRun, FrameGatingAt40MsGivesTheSimulatedFrameCounts) {
  TB_REQUIRE_EMULATED_PATH();
  auto s = scenario::load_scenario(std::string(TWINBENCH_SOURCE_DIR) +
                                   "/scenarios/examples/frame_gating.textproto");
  auto* link = s.mutable_network()->mutable_link();
  link->set_client_to_server_delay_ms(20);
  link->set_server_to_client_delay_ms(20);
  link->set_downlink_mbps(100);
  link->set_uplink_mbps(100);
  link->set_mtu_bytes(1500);
  s.set_runs(3);
  const auto simulated = median_frames(sim::run_simulated(s, runner::RunOptions{}, 1));
  // What disagrees with the simulation: a cell more than a frame apart, or fewer than 3/4 of the
  // cells equal (a cell may sit on a frame boundary, where a fraction of a millisecond of kernel
  // or scheduling time moves it by one); empty when the claim holds.
  const auto disagreements = [&](const twinbench::ResultSet& run) {
    std::vector<std::string> out;
    const auto on_kernel = median_frames(run);
    if (on_kernel.size() != simulated.size()) return std::vector<std::string>{"other cells"};
    int equal = 0;
    for (const auto& [cell, frames] : simulated) {
      const auto& [variant, fps, bytes] = cell;
      if (std::fabs(on_kernel.at(cell) - frames) > 1.0)
        out.push_back(variant + " " + std::to_string(fps) + " fps " + std::to_string(bytes) +
                      " B: kernel " + std::to_string(on_kernel.at(cell)) + " frames, simulated " +
                      std::to_string(frames));
      equal += on_kernel.at(cell) == frames;
    }
    if (equal < static_cast<int>(simulated.size()) * 3 / 4)
      out.push_back(std::to_string(equal) + " of " + std::to_string(simulated.size()) +
                    " cells equal");
    return out;
  };
  // The run judges its own timing (docs/emulated-path.md): the emulator's packet lateness and the
  // client threads' wake-up lateness, each at p99 within 2 % of the RTT or a frame.
  std::string busy;
  const auto measured = testing::first_valid_attempt(
      [&] {
        auto results = emulated::run_emulated(s, runner::RunOptions{});
        const auto& host = results.run().host_timing();
        const auto& path = results.run().emulated();
        EXPECT_GT(host.wakeups(), 0u) << "the frame loop sleeps between frames";
        EXPECT_LE(host.p50_us(), host.p99_us());
        EXPECT_LE(host.p99_us(), host.max_us());
        testing::RunTiming timing{path.lateness_p99_us(),
                                  std::max(path.lateness_max_us(), host.max_us()),
                                  path.lateness_limit_us(), "packets",
                                  path.valid() ? std::string() : path.invalid_reason()};
        return std::pair{std::move(results), timing};
      },
      busy,
      // Lateness moves frame counts; that the claim still holds on a busy machine would take a
      // coincidence in nearly every cell.
      [&](const twinbench::ResultSet& run) { return disagreements(run).empty(); });
  if (!measured) TB_CANNOT_JUDGE(busy);
  for (const std::string& d : disagreements(*measured)) ADD_FAILURE() << d;
}

TEST(EmulatedRun, AClientStarvedOfCpuMakesTheRunInvalid) {
  TB_REQUIRE_EMULATED_PATH();
  auto s = scenario::parse_scenario(R"(
      name: "starved"
      variants { name: "c3_coop" client: C3HTTP }
      variants { name: "c3_thr" client: C3HTTP threaded: true }
      frame_caps: [60]
      body_bytes: [10240]
      runs: 5
      warmups: 1
      network {
        link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 100 uplink_mbps: 100 }
      }
  )",
                                    "starved");
  // Busy threads of this process, at the client's own priority, twice as many as the cores: the
  // emulator's real-time thread keeps its timing, the client's threads wake late.
  struct Hogs {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    ~Hogs() {  // also when the run throws: a joinable thread left behind would terminate
      stop = true;
      for (auto& t : threads) t.join();
    }
  } hogs;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  for (unsigned i = 0; i < 2 * std::max(1u, std::thread::hardware_concurrency()); ++i)
    hogs.threads.emplace_back([&] {
      while (!hogs.stop.load(std::memory_order_relaxed) &&
             std::chrono::steady_clock::now() < give_up) {
      }
    });
  const auto results = emulated::run_emulated(s, runner::RunOptions{});
  const auto& path = results.run().emulated();
  const auto& timing = results.run().host_timing();
  EXPECT_GT(timing.p99_us(), path.wakeup_limit_us());
  EXPECT_FALSE(path.valid());
  EXPECT_THAT(path.invalid_reason(),
              ::testing::HasSubstr("wake-up lateness of the client's threads"));
}

std::map<std::uint64_t, double> median_times(const twinbench::ResultSet& results) {
  std::map<std::uint64_t, std::vector<double>> times;
  for (const auto& sample : results.samples()) {
    EXPECT_EQ(sample.result(), "success") << sample.error();
    if (!sample.warmup()) times[sample.body_bytes()].push_back(sample.elapsed_ms());
  }
  std::map<std::uint64_t, double> medians;
  for (auto& [bytes, t] : times) medians[bytes] = scenario::summarize(t).median;
  return medians;
}

double kept_alive_ping_ms(bool server_nodelay) {
  auto s = scenario::parse_scenario(R"(
      name: "nagle"
      variants { name: "c3s_coop" client: C3HTTP session: true }
      frame_caps: [0]
      body_bytes: [0]
      runs: 5
      warmups: 2
      frame_loop { frame_work_ms: 0.2 }
      network {
        link { client_to_server_delay_ms: 5 server_to_client_delay_ms: 5 downlink_mbps: 100 uplink_mbps: 100 }
      }
  )",
                                    "nagle");
  const auto results = emulated::run_emulated(s, runner::RunOptions{}, server_nodelay);
  std::vector<double> times;
  for (const auto& sample : results.samples()) {
    EXPECT_EQ(sample.result(), "success") << sample.error();
    if (!sample.warmup()) times.push_back(sample.elapsed_ms());
  }
  std::sort(times.begin(), times.end());
  return times.empty() ? -1 : times[times.size() / 2];
}

TEST(EmulatedRun, NagleAgainstDelayedAckStallsAKeptAliveResponseUnlessTheServerSetsNodelay) {
  TB_REQUIRE_EMULATED_PATH();
  // The server writes the head, then the body: with Nagle on, the body waits for the ACK of the
  // head, which the client delays (Linux: 40 ms minimum ATO) once out of quick-ACK mode.
  const double nagle = kept_alive_ping_ms(false);
  const double nodelay = kept_alive_ping_ms(true);
  EXPECT_LT(nodelay, 10 + 3) << "one round trip";
  EXPECT_GT(nagle, nodelay + 25) << "the delayed-ACK stall";
}

TEST(EmulatedRun, TheKernelCountsTheResponseHeadAsAPacketInSlowStart) {
  TB_REQUIRE_EMULATED_PATH();
  // As tests/sim/slow_start_test.cpp asserts of the simulation.
  auto s = scenario::parse_scenario(R"(
      name: "slow_start"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [0]
      body_bytes: [13032, 41992, 43440]
      runs: 3
      warmups: 0
      frame_loop { frame_work_ms: 0.1 }
      network {
        link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 1000 uplink_mbps: 1000 }
      }
  )",
                                    "slow_start");
  const auto medians = median_times(emulated::run_emulated(s, runner::RunOptions{}));
  const double one_round = medians.at(13032), two_rounds = medians.at(41992),
               three_rounds = medians.at(43440);
  // A round more or less is 40 ms; the hosts' wake-ups add a few.
  EXPECT_NEAR(two_rounds - one_round, 40, 8) << "9 + 20 segments: the second round carries 20";
  EXPECT_NEAR(three_rounds - one_round, 80, 8) << "one segment more spills into a third round";
}

TEST(EmulatedRun, AKilledRunLeavesNoProcessNamespaceOrInterfaceBehind) {
  TB_REQUIRE_EMULATED_PATH();
  const auto dir =
      std::filesystem::temp_directory_path() / ("tb-kill-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto scenario_file = dir / "long.textproto";
  std::ofstream(scenario_file) << R"(
      name: "long"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [60]
      body_bytes: [0]
      runs: 200
      network { link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 10 uplink_mbps: 10 } }
  )";
  std::error_code ec;
  const std::string own_namespace = std::filesystem::read_symlink("/proc/self/ns/net", ec).string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(TWINBENCH_BINARY, "twinbench", "run", scenario_file.c_str(), "--backend", "emulated",
            "--out", (dir / "out").c_str(), "-q", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::set<pid_t> pids;
  std::set<std::string> namespaces;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  // Both sides up: two namespaces other than ours (short-lived helpers such as `ip` may be among
  // the processes; what must not survive is every process and namespace seen).
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    testing::descendants(pid, pids, namespaces);
    namespaces.erase(own_namespace);
    namespaces.erase("");
    if (namespaces.size() >= 2) break;
  }
  ASSERT_GE(namespaces.size(), 2u)
      << "the run did not put its two sides in namespaces of their own";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // mid-run
  testing::kill_and_expect_nothing_left(pid, pids, namespaces);
  EXPECT_FALSE(std::filesystem::exists(dir / "out" / "results.json"))
      << "no result from a killed run";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tb
