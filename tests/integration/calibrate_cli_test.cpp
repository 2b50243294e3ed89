// `twinbench calibrate` on a tiny subset, and `twinbench validate`'s errors for malformed or
// mismatched measured files (exit 2, the message names file:line).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "twinbench/studies/calibrate.hpp"
#include "twinbench/studies/reproduce.hpp"
#include "commands.hpp"
#include "run_cli.hpp"
#include "support/junit_schema.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

class CalibrateCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-calibrate-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return dir_ / name;
  }
  int run(std::vector<std::string> args, std::string* out, std::string* err) {
    return tb::testing::run_cli(std::move(args), err, out);
  }
  void expect_bad_csv(const std::string& name, const std::string& text, int line,
                      const std::string& what) {
    const auto file = write(name, text);
    std::string out, err;
    EXPECT_EQ(run({"validate", file.string(), "--out", (dir_ / "v").string(), "-q"}, &out, &err), 2)
        << err;
    EXPECT_NE(err.find(file.string() + ":" + std::to_string(line) + ":"), std::string::npos) << err;
    EXPECT_NE(err.find(what), std::string::npos) << err;
    EXPECT_FALSE(fs::exists(dir_ / "v" / "reproduction.csv"));
  }
  fs::path dir_;
};

const std::string kHeader = "scenario,fps,body_bytes,variant,median_ms\n";

TEST_F(CalibrateCli, ValidateWrongColumnCount) {
  expect_bad_csv("columns.csv", kHeader + "latency,60,0,c3_coop,183.3\nlatency,60,0,c3s_coop\n", 3,
                 "expected 5 comma-separated fields");
}

TEST_F(CalibrateCli, ValidateNotANumber) {
  expect_bad_csv("number.csv", "# comment\n" + kHeader + "latency,60,0,c3_coop,fast\n", 3,
                 "median_ms");
}

TEST_F(CalibrateCli, ValidateUnknownScenario) {
  expect_bad_csv("scenario.csv", kHeader + "latency,60,0,c3_coop,183.3\nbulk,60,0,c3_coop,183.3\n",
                 3, "bulk");
}

TEST_F(CalibrateCli, ValidateUnknownVariant) {
  expect_bad_csv("variant.csv", kHeader + "latency,60,0,c3_coop,183.3\nlatency,60,0,curl,183.3\n",
                 3, "curl");
}

TEST_F(CalibrateCli, BadCellPatternIsBadInput) {
  std::string out, err;
  EXPECT_EQ(run({"calibrate", "--fit", "latency/45", "--out", (dir_ / "p.textproto").string()},
                &out, &err),
            2);
  EXPECT_NE(err.find("--fit"), std::string::npos) << err;
  EXPECT_EQ(
      run({"calibrate", "--params", "rtt", "--out", (dir_ / "p.textproto").string()}, &out, &err),
      2);
  EXPECT_NE(err.find("rtt_ms"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "p.textproto"));
}

// `validate` (reproduce's code on a subset): the same measured file gives byte-identical report,
// CSV and plots, whether its simulations run in one process or in worker processes.
TEST_F(CalibrateCli, ValidateWritesByteIdenticalFilesAcrossRunsAndJobs) {
  const auto file = write("measured.csv",
                          "scenario,fps,body_bytes,variant,min_ms,q1_ms,median_ms,q3_ms,max_ms\n"
                          "latency,30,0,c3s_coop,60,66,66.7,67,80\n"
                          "latency,60,0,c3_thr,150,160,166.6,170,200\n");
  std::string out, err;
  for (const char* jobs : {"1", "2"}) {
    ASSERT_EQ(
        run({"validate", file.string(), "--out", (dir_ / jobs).string(), "--jobs", jobs, "-q"},
            &out, &err),
        0)
        << err;
  }
  for (const char* name :
       {"reproduction.csv", "reproduction.md", "reproduction.svg", "reproduction.png"}) {
    std::ifstream a(dir_ / "1" / name, std::ios::binary), b(dir_ / "2" / name, std::ios::binary);
    std::stringstream ta, tb;
    ta << a.rdbuf();
    tb << b.rdbuf();
    EXPECT_FALSE(ta.str().empty()) << name;
    EXPECT_EQ(ta.str(), tb.str()) << name;
  }
}

// `validate` takes twinbench's own results.csv (the reference columns, then min..max and runs):
// the model's own output, validated against the same model and profile, is matched in every cell,
// five-number summaries included.
TEST_F(CalibrateCli, ValidateTakesItsOwnResultsCsvAndTheModelMatchesItself) {
  std::string out, err;
  ASSERT_EQ(run({"run", "--profile", "lightsail-2026", "--runs", "2", "--out",
                 (dir_ / "run").string(), "-q"},
                &out, &err),
            0)
      << err;
  ASSERT_EQ(run({"validate", (dir_ / "run" / "results.csv").string(), "--profile", "lightsail-2026",
                 "--runs", "2", "--out", (dir_ / "v").string(), "-q"},
                &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("24 cells: 24 within one frame"), std::string::npos) << out;
  EXPECT_NE(out.find("24 of the 24 cells with a measured five-number summary"), std::string::npos)
      << out;
  std::ifstream csv(dir_ / "v" / "reproduction.csv");
  std::string line;
  std::getline(csv, line);
  ASSERT_EQ(line, "scenario,fps,body_bytes,variant,median_ms,measured_ms,simulated_ms");
  int rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    const auto last = line.rfind(',');
    const auto before = line.rfind(',', last - 1);
    EXPECT_EQ(line.substr(before + 1, last - before - 1), line.substr(last + 1)) << line;
  }
  EXPECT_EQ(rows, 24);
}

// Fewer rounds than the protocol are said in the report; a quote in a path or title does not
// break the plot (gnuplot's quoting).
TEST_F(CalibrateCli, ValidateWithFewerRoundsSaysSoAndPlotsPathsWithQuotes) {
  const auto file = write("it's.csv", kHeader + "latency,60,0,c3s_coop,50\n");
  const auto out_dir = dir_ / "o'ut";
  std::string out, err;
  ASSERT_EQ(
      run({"validate", file.string(), "--runs", "2", "--out", out_dir.string(), "-q", "--junit",
           (dir_ / "v.xml").string()},
          &out, &err),
      0)
      << err;
  // One case, failed exactly when the report says the cell is outside.
  EXPECT_EQ(tb::testing::junit_schema_errors(dir_ / "v.xml"), "");
  const bool outside = out.find(", 0 within max(1 frame, 5 %)") != std::string::npos;
  EXPECT_NE(scenario::read_file(dir_ / "v.xml").value_or("").find(
                fmt::format("tests=\"1\" failures=\"{}\"", outside ? 1 : 0)),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("(2 measured rounds per cell, not the protocol's)"), std::string::npos) << out;
  EXPECT_EQ(err.find("gnuplot failed"), std::string::npos) << err;
  for (const char* name :
       {"reproduction.csv", "reproduction.md", "reproduction.svg", "reproduction.png"}) {
    EXPECT_TRUE(fs::exists(out_dir / name)) << name;
  }
}

// --starts: one descent per starting value, each reported, the profile written from the best.
TEST_F(CalibrateCli, DescendsFromEachStartingValue) {
  const auto file = dir_ / "fitted.textproto";
  std::string out, err;
  ASSERT_EQ(run({"calibrate", "--fit", "latency/60/0/c3s_coop", "--holdout", "latency/60/0/c3s_thr",
                 "--params", "server_think_ms", "--starts", "server_think_ms=0,2.5", "--runs", "1",
                 "--passes", "1", "--out", file.string(), "-q", "-j", "1"},
                &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("One descent per starting value of `server_think_ms`"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\n| 0 | "), std::string::npos) << out;
  EXPECT_NE(out.find("\n| 2.5 | "), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(file));
  for (const char* bad : {"think=1", "server_think_ms", "server_think_ms=1,x", "rtt_ms=30"}) {
    EXPECT_EQ(run({"calibrate", "--params", "server_think_ms", "--starts", bad, "--out",
                   (dir_ / "bad.textproto").string()},
                  &out, &err),
              2)
        << bad;
    EXPECT_NE(err.find("--starts"), std::string::npos) << err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "bad.textproto"));
}

// The best start wins: two parameters that trade off (the RTT and the think time of uncapped
// pings), one pass, so that each start ends in a different place; the better start is listed
// second, and the profile written is the one fitted from it.
TEST_F(CalibrateCli, WritesTheProfileOfTheStartWithTheLowestLoss) {
  const auto file = dir_ / "fitted.textproto";
  std::string out, err;
  ASSERT_EQ(
      run({"calibrate", "--fit", "latency/0/0/c3s_coop,latency/0/0/c3_coop", "--holdout",
           "latency/0/0/c3s_thr", "--params", "server_think_ms,rtt_ms", "--starts", "rtt_ms=40,20",
           "--runs", "1", "--passes", "1", "--out", file.string(), "-q", "-j", "1"},
          &out, &err),
      0)
      << err;
  // Rows "| start | loss | value;value;|", values in the order of the profile's header lines.
  const std::regex row(R"(\n\| ([0-9.]+) \| ([0-9.]+) \| ([0-9.;]+)\|)");
  std::vector<std::pair<double, std::string>> starts;  // loss, fitted values
  for (auto it = std::sregex_iterator(out.begin(), out.end(), row); it != std::sregex_iterator();
       ++it) {
    starts.emplace_back(std::stod((*it)[2]), (*it)[3]);
  }
  ASSERT_EQ(starts.size(), 2u) << out;
  ASSERT_NE(starts[0].first, starts[1].first)
      << "the starts must end apart for this test to tell them apart\n"
      << out;
  const auto best = std::min_element(starts.begin(), starts.end());
  EXPECT_EQ(best - starts.begin(), 1) << out;

  std::ifstream in(file);
  std::string line;
  std::string written;
  const std::regex fitted(R"(^#   [a-z_]+ = ([0-9.]+) \(start)");
  while (std::getline(in, line)) {
    if (std::smatch m; std::regex_search(line, m, fitted)) written += m[1].str() + ";";
  }
  EXPECT_EQ(written, best->second) << out;
}

// The sensitivity table: each fitted parameter one grid step either side of its fitted value. The
// descent chose the fitted value over both neighbours, so neither has a lower loss or more cells
// within the goal; the neighbours are the adjacent grid values (0.25 ms apart for think time).
TEST_F(CalibrateCli, ReportsTheFitSetOneGridStepEitherSideOfTheFit) {
  const auto file = dir_ / "fitted.textproto";
  std::string out, err;
  ASSERT_EQ(run({"calibrate", "--fit", "latency/60/0/c3s_coop,latency/0/0/c3s_coop", "--holdout",
                 "latency/60/0/c3s_thr", "--params", "server_think_ms", "--runs", "1", "--passes",
                 "1", "--out", file.string(), "-q", "-j", "1"},
                &out, &err),
            0)
      << err;
  const std::string cell = R"(([0-9.]+): ([0-9]+)/2 \(loss ([0-9.]+)\))";
  const std::regex row("\n\\| `server_think_ms` \\| " + cell + " \\| " + cell + " \\| " + cell +
                       " \\|");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, row)) << out;
  const double fitted = std::stod(m[1]), down = std::stod(m[4]), up = std::stod(m[7]);
  EXPECT_DOUBLE_EQ(down, fitted - 0.25);
  EXPECT_DOUBLE_EQ(up, fitted + 0.25);
  EXPECT_LE(std::stod(m[3]), std::stod(m[6])) << out;
  EXPECT_LE(std::stod(m[3]), std::stod(m[9])) << out;
  EXPECT_GE(std::stoi(m[2]), std::stoi(m[5])) << out;
  EXPECT_GE(std::stoi(m[2]), std::stoi(m[8])) << out;
}

// A tiny calibration: one parameter, two cells fitted, one held out, two runs per cell.
TEST_F(CalibrateCli, FitsOneParameterOnATinySubsetAndWritesTheProfile) {
  const auto file = dir_ / "fitted.textproto";
  std::string out, err;
  ASSERT_EQ(run({"calibrate", "--fit", "latency/60/0/c3s_coop,latency/60/0/c3s_thr", "--holdout",
                 "latency/60/0/c3_coop", "--params", "server_think_ms", "--runs", "2", "--passes",
                 "1", "--out", file.string(), "-q", "-j", "1"},
                &out, &err),
            0)
      << err;
  EXPECT_NE(out.find("server_think_ms"), std::string::npos) << out;
  EXPECT_NE(out.find("Fit set: 2 cells"), std::string::npos) << out;
  EXPECT_NE(out.find("Held-out: 1 cells"), std::string::npos) << out;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("server_think_ms ="), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("name: \"lightsail-2026\""), std::string::npos) << text.str();
  // The fitted profile is a profile again.
  const auto again = dir_ / "again.textproto";
  ASSERT_EQ(run({"calibrate", "--profile", file.string(), "--fit", "latency/60/0/c3s_coop",
                 "--holdout", "latency/60/0/c3s_thr", "--params", "server_think_ms", "--runs", "1",
                 "--passes", "1", "--out", again.string(), "-q", "-j", "1"},
                &out, &err),
            0)
      << err;
}

}  // namespace
}  // namespace tb

namespace tb {
namespace {

std::vector<std::string> names(const std::vector<studies::CalibrationParameter>& params) {
  std::vector<std::string> n;
  for (const auto& p : params) n.push_back(p.name);
  return n;
}

// Jitter is random: with the default handful of runs per cell its medians would be noise, so it
// is fitted only when asked for by name.
TEST(CalibrateParameters, JitterIsFittedOnlyWhenNamed) {
  const auto defaults = names(studies::select_parameters(""));
  EXPECT_EQ(std::count(defaults.begin(), defaults.end(), "jitter_ms"), 0);
  EXPECT_EQ(std::count(defaults.begin(), defaults.end(), "rtt_ms"), 1);
  EXPECT_EQ(names(studies::select_parameters("rtt_ms,jitter_ms")),
            (std::vector<std::string>{"rtt_ms", "jitter_ms"}));
  EXPECT_THROW(studies::select_parameters("jitter"), std::runtime_error);
}

// The interquartile criterion: the simulated median against the measured q1..q3, to the 0.1 ms
// the reference files are rounded to; unknown for a cell measured without a summary.
TEST(CompareCells, WithinTheMeasuredInterquartileRange) {
  auto cell = [](std::optional<std::pair<double, double>> iqr, double simulated_median) {
    studies::CellComparison c;
    c.measured.median_ms = 165;
    if (iqr)
      c.measured.summary =
          scenario::Summary{25, 150, iqr->first, 165, iqr->second, 180, 180, 180, 165};
    c.simulated = scenario::summarize({simulated_median});
    c.frame_ms = 1000.0 / 60;
    return c;
  };
  EXPECT_EQ(cell(std::nullopt, 165).within_measured_iqr(), std::nullopt);
  EXPECT_EQ(cell(std::pair(160.0, 170.0), 165).within_measured_iqr(), true);
  EXPECT_EQ(cell(std::pair(160.0, 170.0), 170.05).within_measured_iqr(), true);
  EXPECT_EQ(cell(std::pair(160.0, 170.0), 170.2).within_measured_iqr(), false);
  EXPECT_EQ(cell(std::pair(160.0, 170.0), 159.85).within_measured_iqr(), false);
  // A frame-quantized cell: q1 = q3 = 10 frames at 60 fps, published to 0.1 ms.
  EXPECT_EQ(cell(std::pair(166.6, 166.6), 1000.0 / 6).within_measured_iqr(), true);
  EXPECT_EQ(cell(std::pair(166.6, 166.6), 1100.0 / 6).within_measured_iqr(), false);

  studies::Comparison all;
  all.cells = {cell(std::nullopt, 165), cell(std::pair(160.0, 170.0), 165),
               cell(std::pair(160.0, 170.0), 175)};
  EXPECT_EQ(all.with_summary(), 2u);
  EXPECT_EQ(all.within_measured_iqr(), 1u);
  EXPECT_NE(studies::comparison_markdown(all, "t").find(
                "**1 of the 2 cells with a published five-number summary"),
            std::string::npos);
}

}  // namespace
}  // namespace tb
