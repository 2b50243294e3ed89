// The simulated TCP: Bad network configurations are refused with the field named.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- bad configurations ----

TEST(SimConfig, SimNetworkRejectsImpossibleLinks) {
  SimulationScope scope(1);
  auto negative = path();
  negative.mutable_link()->set_client_to_server_delay_ms(-1);
  EXPECT_THROW(SimNetwork(negative, 1), InputError);
  auto zero_rate = path();
  zero_rate.mutable_link()->set_downlink_mbps(0);
  EXPECT_THROW(SimNetwork(zero_rate, 1), InputError);
}

std::string scenario_error(const std::string& network) {
  const std::string text =
      "name: \"x\"\nvariants { name: \"v\" client: C3HTTP }\nframe_caps: [60]\n"
      "body_bytes: [0]\nruns: 1\nnetwork {\n" +
      network + "\n}\n";
  try {
    scenario::parse_scenario(text, "s.textproto");
  } catch (const scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(SimConfig, ScenarioValidationNamesTheNetworkField) {
  const std::string link = "link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 ";
  EXPECT_EQ(scenario_error(link + "downlink_mbps: 100 uplink_mbps: 10 }"), "");
  // "network {" is line 6 of the scenario, the link line 7 (also for its missing fields).
  EXPECT_EQ(
      scenario_error("link { client_to_server_delay_ms: -1 downlink_mbps: 100 uplink_mbps: 10 }"),
      "s.textproto:7: network.link.client_to_server_delay_ms: expected a finite number of "
      "milliseconds >= 0, "
      "got -1");
  EXPECT_EQ(scenario_error(link + "uplink_mbps: 10 }"),
            "s.textproto:7: network.link.downlink_mbps: expected a rate in Mbit/s > 0, got 0");
  EXPECT_EQ(
      scenario_error(link +
                     "downlink_mbps: 100 uplink_mbps: 10 }\nserver_tcp { congestion_control: 9 }"),
      "s.textproto:8: network.server_tcp.congestion_control: expected CUBIC, BBR or NEW_RENO, got "
      "9");
  EXPECT_EQ(scenario_error(link + "downlink_mbps: 100 uplink_mbps: 10 downlink_policer_mbps: -5 }"),
            "s.textproto:7: network.link.downlink_policer_mbps: expected a rate in Mbit/s >= 0 (0: "
            "no policer), got -5");
  EXPECT_EQ(scenario_error(link + "downlink_mbps: 100 uplink_mbps: 10 downlink_policer_mbps: 50 }"),
            "s.textproto:7: network.link.downlink_policer_burst_bytes: expected a bucket of at "
            "least one packet "
            "(1500 bytes, the MTU) with a policer, got 0");
  EXPECT_EQ(scenario_error(
                link + "downlink_mbps: 100 uplink_mbps: 10 downlink_policer_burst_bytes: 9000 }"),
            "");
}

}  // namespace
}  // namespace tb::sim
