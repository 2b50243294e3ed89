// `twinbench load` and `twinbench serve`'s new options through the command line: bad arguments
// exit 2 with a message naming the option, and a short real run writes well-formed JSON per
// repetition and a summary whose CSV row matches its header.
#include <gtest/gtest.h>
#include <google/protobuf/util/json_util.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "commands.hpp"
#include "run_cli.hpp"
#include "load.pb.h"
#include "twinbench/scenario/text.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

using tb::testing::run_cli;
int run(std::vector<std::string> args, std::string* err) { return run_cli(std::move(args), err); }

void expect_bad(const std::vector<std::string>& args, const std::string& names) {
  std::string err;
  EXPECT_EQ(run(args, &err), 2) << err;
  EXPECT_NE(err.find(names), std::string::npos) << err;
}

TEST(LoadCli, BadArgumentsExitTwoNamingTheOption) {
  expect_bad({"load", "--clients", "0"}, "--clients");
  expect_bad({"load", "--window", "x"}, "--window");
  expect_bad({"load", "--duration", "0"}, "--duration");
  expect_bad({"load", "--io-model", "threads"}, "--io-model");
  expect_bad({"load", "--server", "ftp://127.0.0.1:1"}, "--server: expected an http");
  expect_bad({"load", "--server", "http://127.0.0.1:1", "--tls"}, "--tls");
  expect_bad({"load", "--server-nagle", "on"}, "--server-nagle");
  expect_bad({"load", "--server", "http://127.0.0.1:1", "--coalesce-writes"}, "--coalesce-writes");
  expect_bad({"load", "/nonexistent/scenario.textproto"}, "scenario");
  expect_bad({"serve", "--threads", "0"}, "--threads");
  expect_bad({"serve", "--io-model", "pool"}, "--io-model");
}

// Splits one CSV line, honouring quotes.
std::vector<std::string> csv_split(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"')
      quoted = !quoted;
    else if (c == ',' && !quoted)
      fields.emplace_back();
    else
      fields.back() += c;
  }
  return fields;
}

TEST(LoadCli, ShortRunWritesJsonPerRepetitionAndSummaries) {
  const fs::path dir =
      fs::temp_directory_path() / ("twinbench-load-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const std::string command = std::string(TWINBENCH_BINARY) +
                              " load --clients 3 --window 2 --payload 100 --duration 0.2"
                              " --warmup 0.05 --repeat 2 --threads 2 --io-model sharded --out " +
                              dir.string() + " --note test > /dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;

  for (int k = 1; k <= 2; ++k) {
    const auto json = scenario::read_file(dir / ("repetition-" + std::to_string(k) + ".json"));
    ASSERT_TRUE(json) << k;
    twinbench::LoadRepetition r;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(*json, &r).ok()) << *json;
    EXPECT_EQ(r.repetition(), static_cast<unsigned>(k));
    EXPECT_EQ(r.config().clients(), 3u);
    EXPECT_EQ(r.config().io_model(), "sharded");
    EXPECT_EQ(r.config().client_nagle(), "on");
    EXPECT_EQ(r.config().server_nagle(), "on");
    EXPECT_EQ(r.machine().note(), "test");
    EXPECT_GT(r.responses(), 0u);
    EXPECT_EQ(r.errors(), 0u);
    EXPECT_LE(r.latency_ms().p50(), r.latency_ms().p99());
    EXPECT_LE(r.latency_ms().p99(), r.latency_ms().max());
    EXPECT_NEAR(r.requests_per_s() * r.measured_s(), static_cast<double>(r.responses()), 0.5);
  }
  std::ifstream csv(dir / "summary.csv");
  std::string header, row, extra;
  ASSERT_TRUE(std::getline(csv, header) && std::getline(csv, row));
  EXPECT_FALSE(std::getline(csv, extra));
  const auto names = csv_split(header), values = csv_split(row);
  ASSERT_EQ(names.size(), values.size()) << row;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "repetitions") {
      EXPECT_EQ(values[i], "2");
    }
    if (names[i] == "errors_max") {
      EXPECT_EQ(values[i], "0.000");
    }
  }
  const auto md = scenario::read_file(dir / "summary.md");
  ASSERT_TRUE(md);
  EXPECT_NE(md->find("| p99.9 latency (ms) |"), std::string::npos) << *md;
  EXPECT_NE(md->find("Nagle: client on, server on"), std::string::npos) << *md;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb
