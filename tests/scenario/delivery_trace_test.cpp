// Mahimahi delivery traces: the reader's rules and errors, and scenarios that name a trace file
// or schedule their link's delay and loss.
#include "twinbench/scenario/delivery_trace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/child_process.hpp"
#include "twinbench/scenario/network.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb::scenario {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string trace_error(const std::string& text) {
  try {
    parse_delivery_trace(text, "t.trace");
  } catch (const ScenarioError& e) {
    return e.what();
  }
  return "";
}

TEST(DeliveryTrace, ReadsOneOpportunityPerLineWithRepeatsAndCrlf) {
  EXPECT_THAT(parse_delivery_trace("1\n1\n2\n5\n", "t"), ElementsAre(1, 1, 2, 5));
  EXPECT_THAT(parse_delivery_trace("0\r\n3\r\n", "t"), ElementsAre(0, 3));
  EXPECT_THAT(parse_delivery_trace("7", "t"), ElementsAre(7));  // no newline at the end
}

TEST(DeliveryTrace, RefusesWhatMahimahiWouldNotReadWithItsLine) {
  EXPECT_EQ(trace_error("1\n2\nx3\n"),
            "t.trace:3: expected a time in whole milliseconds (0 to 4294967295), one per line, "
            "got \"x3\"");
  EXPECT_THAT(trace_error("1\n\n3\n"), HasSubstr("t.trace:2: expected a time"));
  EXPECT_THAT(trace_error("1.5\n"), HasSubstr("t.trace:1: expected a time"));
  EXPECT_THAT(trace_error("-1\n"), HasSubstr("t.trace:1: expected a time"));
  EXPECT_EQ(trace_error("5\n4\n"),
            "t.trace:2: expected a time >= the line before's 5 ms (times never decrease), got 4");
  EXPECT_THAT(trace_error(""), HasSubstr("expected at least one delivery opportunity"));
  EXPECT_THAT(trace_error("0\n0\n"), HasSubstr("expected a last time over 0 ms"));
}

TEST(DeliveryTrace, TheMeanRateIsItsBytesOverItsPeriod) {
  // 12 opportunities in 12 ms: one 1504-byte packet a ms.
  std::vector<std::uint32_t> trace;
  for (std::uint32_t ms = 1; ms <= 12; ++ms) trace.push_back(ms);
  EXPECT_DOUBLE_EQ(trace_mean_mbps(trace), 12.032);
  trace.insert(trace.end(), trace.begin(), trace.end());  // not sorted, but the count doubles
  EXPECT_DOUBLE_EQ(trace_mean_mbps(trace), 24.064);
}

// A scenario naming `trace_line` inside network.link, written beside a trace file.
struct ScenarioWithTrace {
  testing::TempDir dir{"twinbench-trace"};
  std::string scenario_path;

  ScenarioWithTrace(const std::string& link_fields, const std::string& trace_text) {
    std::ofstream(dir.path() / "path.trace") << trace_text;
    scenario_path = (dir.path() / "s.textproto").string();
    std::ofstream(scenario_path) << "name: \"traced\"\n"
                                    "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
                                    "frame_caps: [60]\nbody_bytes: [0]\nruns: 1\n"
                                    "network {\n  link {\n    uplink_mbps: 10\n"
                                 << link_fields << "  }\n}\n";
  }
  std::string error() const {
    try {
      load_scenario(scenario_path);
    } catch (const ScenarioError& e) {
      return e.what();
    }
    return "";
  }
};

TEST(DeliveryTrace, AScenarioReadsItsTraceFileBesideItAndTakesItsMeanRate) {
  ScenarioWithTrace s("    downlink_trace { file: \"path.trace\" }\n", "1\n2\n2\n4\n");
  const twinbench::Scenario loaded = load_scenario(s.scenario_path);
  EXPECT_THAT(loaded.network().link().downlink_trace().opportunities_ms(), ElementsAre(1, 2, 2, 4));
  const ResolvedLink link = resolve(loaded.network().link());
  EXPECT_TRUE(link.varies_over_time());
  EXPECT_DOUBLE_EQ(link.downlink_mbps, 4 * 1504 * 8 / 4e3);  // no downlink_mbps needed
  EXPECT_TRUE(link.uplink_trace_ms.empty());
}

TEST(DeliveryTrace, ABadTraceFileIsAnErrorNamingTheScenarioFieldAndTheTraceLine) {
  ScenarioWithTrace bad("    downlink_trace { file: \"path.trace\" }\n", "1\n2\nfast\n");
  EXPECT_THAT(bad.error(), HasSubstr("s.textproto:9: network.link.downlink_trace.file: "));
  EXPECT_THAT(bad.error(), HasSubstr("path.trace:3: expected a time in whole milliseconds"));
  ScenarioWithTrace missing("    downlink_trace { file: \"nowhere.trace\" }\n", "1\n");
  EXPECT_THAT(missing.error(), HasSubstr("nowhere.trace: cannot open"));
  ScenarioWithTrace both("    downlink_trace { file: \"path.trace\" opportunities_ms: [1] }\n",
                         "1\n");
  EXPECT_THAT(both.error(), HasSubstr("expected a trace file or its opportunities_ms, not both"));
  ScenarioWithTrace neither("    downlink_trace { }\n", "1\n");
  EXPECT_THAT(neither.error(), HasSubstr("expected a trace file or its opportunities_ms"));
  ScenarioWithTrace no_rate("", "1\n");
  EXPECT_THAT(no_rate.error(), HasSubstr("network.link.downlink_mbps: expected a rate"));
}

TEST(DeliveryTrace, SchedulesRunForwardInTimeWithValuesInRange) {
  const std::string rate = "    downlink_mbps: 10\n";
  ScenarioWithTrace good(rate +
                             "    loss_schedule { at_ms: 100 value: 1 }\n"
                             "    loss_schedule { at_ms: 400 value: 0 }\n"
                             "    server_to_client_delay_schedule { at_ms: 0 value: 150 }\n",
                         "1\n");
  EXPECT_EQ(good.error(), "");
  ScenarioWithTrace backwards(rate +
                                  "    loss_schedule { at_ms: 400 value: 1 }\n"
                                  "    loss_schedule { at_ms: 100 value: 0 }\n",
                              "1\n");
  EXPECT_THAT(backwards.error(),
              HasSubstr("network.link.loss_schedule[1].at_ms: expected a time after "
                        "loss_schedule[0]'s 400 ms, got 100"));
  ScenarioWithTrace loss(rate + "    loss_schedule { at_ms: 1 value: 1.5 }\n", "1\n");
  EXPECT_THAT(loss.error(), HasSubstr("loss_schedule[0].value: expected a probability in [0, 1]"));
  ScenarioWithTrace delay(rate + "    client_to_server_delay_schedule { at_ms: 1 value: -2 }\n",
                          "1\n");
  EXPECT_THAT(delay.error(),
              HasSubstr("client_to_server_delay_schedule[0].value: expected a delay in ms >= 0"));
}

}  // namespace
}  // namespace tb::scenario

namespace tb::scenario {
namespace {

// Every scenario the repository ships reads, the example on a trace included (its trace file is
// found beside it, relative to the scenario): a shipped scenario that no longer reads is a defect
// a user would meet first. Profiles (profiles/, and real-clients/, which `shell` and `validate`
// lay over a scenario) are read as profiles elsewhere.
TEST(ShippedScenarios, EveryOneReads) {
  std::size_t read = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           std::filesystem::path(TWINBENCH_SOURCE_DIR) / "scenarios")) {
    const auto folder = entry.path().parent_path().filename();
    if (entry.path().extension() != ".textproto" || folder == "profiles" ||
        folder == "real-clients")
      continue;
    EXPECT_NO_THROW(load_scenario(entry.path())) << entry.path();
    ++read;
  }
  EXPECT_GE(read, 13u);
  const auto mobile = load_scenario(std::string(TWINBENCH_SOURCE_DIR) +
                                    "/scenarios/examples/mobile_path.textproto");
  EXPECT_TRUE(resolve(mobile.network().link()).varies_over_time());
  EXPECT_GT(mobile.network().link().downlink_trace().opportunities_ms_size(), 1000);
}

}  // namespace
}  // namespace tb::scenario
