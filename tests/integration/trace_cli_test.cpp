// `twinbench trace` and runs on links that change over time, through the command line: a trace is
// the same file from the same seed and reads back; a shape that cannot be drawn writes nothing; a
// simulated run on a trace with scheduled loss and jitter gives byte-identical files run to run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "run_cli.hpp"
#include "support/child_process.hpp"
#include "twinbench/scenario/delivery_trace.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

TEST(TraceCli, AWalkFromASeedIsTheSameFileAndReadsBackAsATrace) {
  testing::TempDir dir("twinbench-trace-cli");
  const auto walk = [&](const std::string& seed, const fs::path& out) {
    std::string err;
    const int code = testing::run_cli(
        {"trace", "walk", "--min-mbps", "2", "--max-mbps", "20", "--outage-every-ms", "1000",
         "--seed", seed, "--duration-ms", "5000", "-o", out.string()},
        &err);
    EXPECT_EQ(code, 0) << err;
    EXPECT_NE(err.find("trace: wrote"), std::string::npos) << err;
  };
  walk("3", dir.path() / "a.trace");
  walk("3", dir.path() / "b.trace");
  walk("4", dir.path() / "c.trace");
  const std::string a = testing::file_text(dir.path() / "a.trace");
  EXPECT_EQ(a, testing::file_text(dir.path() / "b.trace"));
  EXPECT_NE(a, testing::file_text(dir.path() / "c.trace"));
  const auto trace = scenario::read_delivery_trace(dir.path() / "a.trace");
  EXPECT_EQ(trace.back(), 5000u);
  EXPECT_GT(scenario::trace_mean_mbps(trace), 1);
  EXPECT_LT(scenario::trace_mean_mbps(trace), 20);
}

TEST(TraceCli, AShapeThatCannotBeDrawnIsBadInputAndWritesNothing) {
  testing::TempDir dir("twinbench-trace-cli");
  std::string err;
  EXPECT_EQ(testing::run_cli({"trace", "fade", "--min-mbps", "30", "--max-mbps", "2", "-o",
                              (dir.path() / "f.trace").string()},
                             &err),
            2);
  EXPECT_NE(err.find("min_mbps"), std::string::npos) << err;
  EXPECT_TRUE(testing::files_under(dir.path()).empty());
}

TEST(TraceCli, ARunOnATraceWithScheduledLossAndJitterIsByteIdenticalRunToRun) {
  testing::TempDir dir("twinbench-trace-cli");
  std::string err;
  ASSERT_EQ(testing::run_cli({"trace", "steps", "--mbps", "20,4", "--step-ms", "500",
                              "--duration-ms", "1000", "-o", (dir.path() / "s.trace").string()},
                             &err),
            0)
      << err;
  std::ofstream(dir.path() / "s.textproto") << R"(
name: "stepping"
variants { name: "c3s_coop" client: C3HTTP session: true }
variants { name: "nat_coop" client: HTTP_REQUEST }
frame_caps: [60]
body_bytes: [0, 200000]
runs: 2
network {
  link {
    client_to_server_delay_ms: 15 server_to_client_delay_ms: 15 uplink_mbps: 5 jitter_ms: 1
    downlink_trace { file: "s.trace" }
    loss_schedule { at_ms: 300 value: 0.02 }
    loss_schedule { at_ms: 900 value: 0 }
  }
}
)";
  for (const char* out : {"one", "two"}) {
    ASSERT_EQ(testing::run_cli({"run", (dir.path() / "s.textproto").string(), "--out",
                                (dir.path() / out).string(), "-q", "--seed", "9"},
                               &err),
              0)
        << err;
  }
  const std::string one = testing::file_text(dir.path() / "one" / "results.json");
  EXPECT_FALSE(one.empty());
  EXPECT_EQ(one, testing::file_text(dir.path() / "two" / "results.json"));
  EXPECT_EQ(testing::file_text(dir.path() / "one" / "results.csv"),
            testing::file_text(dir.path() / "two" / "results.csv"));
}

}  // namespace
}  // namespace tb
