// A simulation split into parts (sim/src/run_simulated.cpp): every variant without a Session in a
// part of its own, the Session variants together in one that waits out the others' steps. The
// split must give what the whole interleaved run gives in one simulation.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

// The published interleave order, both clients, cooperative and threaded, with and without a
// Session, plus a second cooperative HTTPRequest right after the first: it starts in the frame
// phase where the first one's script resumes (the end of a frame), which its own part must
// reproduce; with an instant name lookup, a request started earlier in a frame is a status ahead
// by that frame's node process. The server restarts slow start after idle, so a kept connection's
// download depends on how long it sat idle while the other variants ran.
twinbench::Scenario interleaved(const std::string& variants) {
  return scenario::parse_scenario(variants + R"(
      name: "split"
      frame_caps: [60]
      body_bytes: [0, 200000]
      runs: 3
      warmups: 1
      session_scope: PER_SCENARIO
      target { base_url: "http://split.test" }
      network {
        resolve_ms: 0
        link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20
               downlink_mbps: 20 uplink_mbps: 10 }
        server_tcp { congestion_control: CUBIC slow_start_after_idle: true }
      }
  )",
                                  "split");
}

const char* kAllVariants = R"(
    variants { name: "c3_coop"  client: C3HTTP }
    variants { name: "c3_thr"   client: C3HTTP threaded: true }
    variants { name: "c3s_coop" client: C3HTTP session: true }
    variants { name: "c3s_thr"  client: C3HTTP threaded: true session: true }
    variants { name: "nat_coop" client: HTTP_REQUEST }
    variants { name: "nat_coop_again" client: HTTP_REQUEST }
    variants { name: "nat_thr"  client: HTTP_REQUEST threaded: true }
)";
const char* kSessionVariants = R"(
    variants { name: "c3s_coop" client: C3HTTP session: true }
    variants { name: "c3s_thr"  client: C3HTTP threaded: true session: true }
)";

twinbench::ResultSet in_one_simulation(const twinbench::Scenario& s) {
  sim::SimBackend sim(s, 1);
  runner::RunOptions options;
  options.base_url = sim.base_url();
  options.tls = sim.tls_client();
  return runner::run_scenario(s, sim.backend(), options);
}

// The samples of `variants`, serialized, in the order recorded.
std::vector<std::string> samples_of(const twinbench::ResultSet& r,
                                    const std::set<std::string>& variants) {
  std::vector<std::string> out;
  for (const auto& sample : r.samples()) {
    if (variants.count(sample.variant())) out.push_back(sample.SerializeAsString());
  }
  return out;
}

TEST(SimSplit, PartsGiveWhatTheWholeInterleavedRunGives) {
  const std::set<std::string> all = {"c3_coop",  "c3_thr",         "c3s_coop", "c3s_thr",
                                     "nat_coop", "nat_coop_again", "nat_thr"};
  const auto s = interleaved(kAllVariants);
  const auto whole = in_one_simulation(s);
  ASSERT_EQ(whole.samples_size(), 2 * 4 * 7);
  const fs::path dir =
      fs::temp_directory_path() / ("twinbench-split-" + std::to_string(::getpid()));
  for (const unsigned jobs : {1u, 2u}) {
    fs::remove_all(dir);
    const auto split = sim::run_simulated(s, runner::RunOptions{}, jobs, dir.string());
    EXPECT_EQ(samples_of(split, all), samples_of(whole, all)) << jobs << " jobs";
    // It was split: five fresh-connection parts and one of the two Session variants.
    std::size_t parts = 0;
    for (const auto& file : fs::directory_iterator(dir))
      parts += file.path().filename().string().ends_with("-client.pcap");
    EXPECT_EQ(parts, 6u);
  }
  // --whole-run: one simulation, the same samples.
  fs::remove_all(dir);
  const auto one = sim::run_simulated(s, runner::RunOptions{}, 2, dir.string(), /*whole_run=*/true);
  EXPECT_EQ(samples_of(one, all), samples_of(whole, all));
  EXPECT_TRUE(fs::exists(dir / "part-0-client.pcap"));
  EXPECT_FALSE(fs::exists(dir / "part-1-client.pcap"));
  fs::remove_all(dir);
  for (const auto& sample : whole.samples())
    EXPECT_EQ(sample.result(), "success") << sample.variant();
}

TEST(SimSplit, ProgressSeesEverySampleOnceWhicheverPartRanIt) {
  const auto s = interleaved(kAllVariants);
  for (const unsigned jobs : {1u, 2u}) {
    std::multiset<std::string> seen;
    std::vector<std::size_t> counts;
    runner::RunOptions options;
    options.on_sample = [&](const twinbench::Sample& sample, std::size_t done, std::size_t total) {
      seen.insert(sample.SerializeAsString());
      counts.push_back(done);
      EXPECT_EQ(total, 2u * 4 * 7);
    };
    const auto results = sim::run_simulated(s, options, jobs);
    std::multiset<std::string> recorded;
    for (const auto& sample : results.samples()) recorded.insert(sample.SerializeAsString());
    EXPECT_EQ(seen, recorded) << jobs << " jobs";
    std::vector<std::size_t> expected(recorded.size());
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = i + 1;
    EXPECT_EQ(counts, expected) << jobs << " jobs";
  }
}

// What makes PartsGiveWhatTheWholeInterleavedRunGives worth its name: the Session variants'
// samples depend on the other variants' steps between theirs, which their part must wait out.
TEST(SimSplit, SessionVariantsAloneSeeNoIdleGapsAndDiffer) {
  const std::set<std::string> kept = {"c3s_coop", "c3s_thr"};
  EXPECT_NE(samples_of(in_one_simulation(interleaved(kSessionVariants)), kept),
            samples_of(in_one_simulation(interleaved(kAllVariants)), kept));
}

}  // namespace
}  // namespace tb
