// scenario.clients: several game clients running the protocol at once on one simulated path
// (docs/load.md, "Simulated load"): each runs the whole protocol, they share the bottleneck, and
// the run is as deterministic as a single client's.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"

namespace tb {
namespace {

// 1 MiB downloads over 10 Mbit/s: about 0.85 s on the wire alone, so clients that overlap share
// the downlink visibly.
twinbench::Scenario downloads(std::uint32_t clients) {
  auto s = scenario::parse_scenario(R"(
      name: "clients"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [60]
      body_bytes: [1048576]
      runs: 3
      warmups: 0
      network {
        link { client_to_server_delay_ms: 12 server_to_client_delay_ms: 12
               downlink_mbps: 10 uplink_mbps: 10 }
      }
  )",
                                    "clients");
  s.set_clients(clients);
  return s;
}

twinbench::ResultSet simulate(const twinbench::Scenario& s, std::uint64_t seed = 1) {
  runner::RunOptions options;
  options.seed = seed;
  return sim::run_simulated(s, options, 1);
}

double median_ms(const twinbench::ResultSet& results) {
  std::vector<double> ms;
  for (const auto& sample : results.samples()) {
    EXPECT_EQ(sample.result(), "success") << sample.error();
    ms.push_back(sample.elapsed_ms());
  }
  return scenario::summarize(ms).median;
}

TEST(SimClients, EveryClientRunsTheWholeProtocolWithItsOwnConnections) {
  auto s = scenario::parse_scenario(R"(
      name: "clients"
      variants { name: "c3s_coop" client: C3HTTP session: true }
      variants { name: "nat_coop" client: HTTP_REQUEST }
      frame_caps: [60]
      body_bytes: [0, 20480]
      runs: 2
      warmups: 1
      clients: 3
      network { link { client_to_server_delay_ms: 12 server_to_client_delay_ms: 12
                       downlink_mbps: 100 uplink_mbps: 100 } }
  )",
                                    "clients");
  const auto results = simulate(s);
  // 2 variants x 2 sizes x 3 rounds per client.
  ASSERT_EQ(results.samples_size(), 3 * 12);
  std::map<std::uint32_t, int> per_client, reused;
  for (const auto& sample : results.samples()) {
    EXPECT_EQ(sample.result(), "success") << sample.error();
    ++per_client[sample.client()];
    reused[sample.client()] += sample.reused_connection();
  }
  EXPECT_EQ(per_client, (std::map<std::uint32_t, int>{{0, 12}, {1, 12}, {2, 12}}));
  // Each client's Session keeps its own connection: all its c3s_coop requests but the first
  // reuse it (5 of 6), none of HTTPRequest's.
  EXPECT_EQ(reused, (std::map<std::uint32_t, int>{{0, 5}, {1, 5}, {2, 5}}));
}

TEST(SimClients, ClientsShareTheBottleneck) {
  const double one = median_ms(simulate(downloads(1)));
  const double four = median_ms(simulate(downloads(4)));
  // One client: 1 MiB at 10 Mbit/s is 0.84 s on the wire, plus slow start and the handshake.
  EXPECT_GT(one, 840);
  EXPECT_LT(one, 1400);
  // Four clients downloading at once get a quarter of the downlink each (their phases differ by
  // less than a frame): about four times as long, never less than three.
  EXPECT_GT(four, 3 * 840) << "one client alone: " << one << " ms";
  EXPECT_LT(four, 5 * one);
}

TEST(SimClients, PhasesComeFromTheSeed) {
  const auto s = downloads(3);
  const auto a = simulate(s, 7);
  const auto b = simulate(s, 7);
  const auto c = simulate(s, 8);
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  std::vector<double> ms_a, ms_c;
  for (const auto& x : a.samples()) ms_a.push_back(x.elapsed_ms());
  for (const auto& x : c.samples()) ms_c.push_back(x.elapsed_ms());
  EXPECT_NE(ms_a, ms_c) << "another seed starts the clients at other phases";
}

TEST(SimClients, OneClientIsTheSingleClientRun) {
  auto unset = downloads(1);
  unset.clear_clients();
  const auto a = simulate(unset);
  const auto b = simulate(downloads(1));
  ASSERT_EQ(a.samples_size(), b.samples_size());
  for (int i = 0; i < a.samples_size(); ++i)
    EXPECT_EQ(a.samples(i).SerializeAsString(), b.samples(i).SerializeAsString());
}

TEST(SimClients, ALoadRunsInSimulationOnly) {
  const auto s = downloads(2);
  sim::SimBackend sim(s, 1);
  runner::Backend live_like = sim.backend();
  live_like.runs_many_clients = false;  // what the live backend says
  runner::RunOptions options;
  options.base_url = sim.base_url();
  try {
    runner::run_scenario(s, live_like, options);
    FAIL() << "a live load was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("scenario.clients: 2 clients run in simulation only"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tb
