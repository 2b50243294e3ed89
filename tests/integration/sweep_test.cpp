// Parameter sweeps: axis specs, byte-identical output however the points are scheduled (jobs,
// shards merged), resuming without redoing points, and clear errors for bad input.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "commands.hpp"
#include "run_cli.hpp"
#include "twinbench/studies/sweep.hpp"
#include "support/child_process.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;


std::vector<std::string> texts(const studies::Axis& axis) {
  std::vector<std::string> out;
  for (const auto& v : axis.values) out.push_back(v.text);
  return out;
}

twinbench::Scenario two_variants() {
  twinbench::Scenario s;
  s.add_variants()->set_name("c3_coop");
  s.add_variants()->set_name("nat_coop");
  return s;
}

TEST(SweepAxis, UnitsRangesAndLists) {
  const auto s = two_variants();
  EXPECT_EQ(texts(studies::parse_axis("rtt=10ms..40ms/4", s)),
            (std::vector<std::string>{"10", "20", "30", "40"}));
  EXPECT_EQ(texts(studies::parse_axis("rtt=500us,0.5s", s)),
            (std::vector<std::string>{"0.5", "500"}));
  EXPECT_EQ(texts(studies::parse_axis("rate=10Mbit,100mbit,1Gbit,512Kbit", s)),
            (std::vector<std::string>{"10", "100", "1000", "0.512"}));
  EXPECT_EQ(texts(studies::parse_axis("size=1KiB..1MiB/3:log,0", s)),
            (std::vector<std::string>{"1024", "32768", "1048576", "0"}));
  EXPECT_EQ(texts(studies::parse_axis("loss=0,1%,0.05", s)),
            (std::vector<std::string>{"0", "0.01", "0.05"}));
  EXPECT_EQ(texts(studies::parse_axis("cc=cubic,BBR,newreno", s)),
            (std::vector<std::string>{"cubic", "bbr", "newreno"}));
  EXPECT_EQ(texts(studies::parse_axis("variant=nat_coop", s)),
            (std::vector<std::string>{"nat_coop"}));
  EXPECT_EQ(studies::parse_axis("chunk=4KiB", s).column, "chunk_bytes");
}

TEST(SweepAxis, PointsVaryTheLastAxisFastestAndApply) {
  auto s = two_variants();
  s.add_frame_caps(60);
  const std::vector<studies::Axis> axes = {studies::parse_axis("rtt=10ms,20ms", s),
                                           studies::parse_axis("fps=30,60,120", s),
                                           studies::parse_axis("variant=nat_coop", s)};
  const auto points = studies::enumerate_points(axes);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[1].key, "rtt_ms=10,fps=60,variant=nat_coop");
  EXPECT_EQ(points[3].key, "rtt_ms=20,fps=30,variant=nat_coop");
  const auto p = studies::apply_point(s, axes, points[5]);
  EXPECT_EQ(p.network().link().client_to_server_delay_ms(), 10);
  EXPECT_EQ(p.network().link().server_to_client_delay_ms(), 10);
  ASSERT_EQ(p.frame_caps_size(), 1);
  EXPECT_EQ(p.frame_caps(0), 120u);
  ASSERT_EQ(p.variants_size(), 1);
  EXPECT_EQ(p.variants(0).name(), "nat_coop");
}

TEST(SweepAxis, ATraceAxisGivesEachPointItsDownlinkTraceAndRefusesABadFile) {
  testing::TempDir dir("twinbench-sweep-trace");
  const std::string good = (dir.path() / "good.trace").string();
  const std::string bad = (dir.path() / "bad.trace").string();
  std::ofstream(good) << "1\n1\n4\n";
  std::ofstream(bad) << "1\n0\n";
  auto s = two_variants();
  const auto axis = studies::parse_axis("trace=" + good, s);
  EXPECT_EQ(axis.column, "trace");
  const auto p = studies::apply_point(s, {axis}, studies::enumerate_points({axis})[0]);
  EXPECT_EQ(p.network().link().downlink_trace().opportunities_ms_size(), 3);
  EXPECT_EQ(p.network().link().downlink_trace().file(), good);
  try {
    studies::parse_axis("trace=" + good + "," + bad, s);
    ADD_FAILURE() << "a bad trace file was taken";
  } catch (const studies::SweepError& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ":2: expected a time >="), std::string::npos)
        << e.what();
  }
}

// A range or a grid too large to hold is an input error, not an allocation of gigabytes
// (tests/fuzz, sweep_axis).
// parse_axis refuses `spec` with a SweepError whose message contains `reason`.
void expect_axis_refused(const std::string& spec, const twinbench::Scenario& s,
                         const std::string& reason) {
  try {
    studies::parse_axis(spec, s);
    ADD_FAILURE() << "\"" << spec << "\" was accepted";
  } catch (const studies::SweepError& e) {
    EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
  }
}

TEST(SweepAxis, RangesAndGridsAreBounded) {
  const auto s = two_variants();
  expect_axis_refused("rtt=1ms..2ms/1000000000", s,
                      "expected at most 100000 points, got 1000000000");
  EXPECT_EQ(studies::parse_axis("rtt=1ms..2ms/100000", s).values.size(), 100000u);
  // Ranges within the bound that together exceed it: refused before their values are made.
  expect_axis_refused("rtt=1ms..2ms/60000,3ms..4ms/60000", s,
                      "expected at most 100000 values on an axis");
  EXPECT_EQ(studies::parse_axis("rtt=1ms..2ms/50000,3ms..4ms/50000", s).values.size(), 100000u);
  const std::vector<studies::Axis> axes = {studies::parse_axis("rtt=1ms..2ms/1000", s),
                                           studies::parse_axis("fps=1..1000/1000", s)};
  EXPECT_THROW(studies::enumerate_points(axes), studies::SweepError);
  EXPECT_EQ(studies::enumerate_points({axes[0], studies::parse_axis("fps=1..100/100", s)}).size(),
            100000u);
}

TEST(SweepAxis, PolicerAndBucketSetTheDownlinkPolicer) {
  auto s = two_variants();
  const std::vector<studies::Axis> axes = {studies::parse_axis("policer=0mbit,20mbit", s),
                                           studies::parse_axis("bucket=64KiB", s)};
  const auto points = studies::enumerate_points(axes);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points[1].key, "policer_mbps=20,bucket_bytes=65536");
  const auto off = studies::apply_point(s, axes, points[0]);
  const auto on = studies::apply_point(s, axes, points[1]);
  EXPECT_EQ(off.network().link().downlink_policer_mbps(), 0);
  EXPECT_EQ(on.network().link().downlink_policer_mbps(), 20);
  EXPECT_EQ(on.network().link().downlink_policer_burst_bytes(), 65536u);
}

class Sweep : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("twinbench-sweep-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // 8 points, 2 variants x 2 sizes each; loss makes the results depend on the points' seeds.
    std::ofstream(scenario())
        << "name: \"small\"\n"
           "variants { name: \"c3_coop\" client: C3HTTP }\n"
           "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
           "frame_caps: [60]\n"
           "body_bytes: [0, 65536]\n"
           "runs: 2\n"
           "network { link { client_to_server_delay_ms: 5 server_to_client_delay_ms: 5\n"
           "                 downlink_mbps: 50 uplink_mbps: 20 } }\n"
           "sweep: \"rtt=10ms,40ms\"\n"
           "sweep: \"rate=10Mbit,100Mbit\"\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path scenario() const { return dir_ / "small.textproto"; }
  std::vector<std::string> sweep_args(const std::string& out) const {
    return {"sweep", scenario().string(),  "--axis", "loss=0,2%", "--seed", "5", "-q",
            "--out", (dir_ / out).string()};
  }
  int run(std::vector<std::string> args, std::string* err = nullptr) {
    return tb::testing::run_cli(std::move(args), err);
  }
  std::vector<std::string> with(std::vector<std::string> args, std::vector<std::string> extra) {
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  std::pair<std::string, std::string> outputs(const std::string& out) {
    return {testing::file_text(dir_ / out / "sweep.csv"),
            testing::file_text(dir_ / out / "sweep.jsonl")};
  }
  fs::path dir_;
};

TEST_F(Sweep, OutputIsByteIdenticalForJobsAndMergedShards) {
  std::string err;
  ASSERT_EQ(run(with(sweep_args("j1"), {"--jobs", "1"}), &err), 0) << err;
  EXPECT_NE(err.find("sweep: 8 points: ran 8, skipped 0 already done"), std::string::npos) << err;
  ASSERT_EQ(run(with(sweep_args("j2"), {"--jobs", "2"})), 0);

  // Four shards as a batch engine runs them: GNU parallel, one process per shard.
  std::string shards;
  for (const auto& arg : sweep_args("s{}")) shards += " '" + arg + "'";
  const std::string command = "parallel --will-cite -j 4 '" TWINBENCH_BINARY "'" + shards +
                              " --jobs 1 --shard {}/4 ::: 0 1 2 3";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::vector<std::string> merge = {"merge"};
  for (int i = 0; i < 4; ++i) merge.push_back((dir_ / ("s" + std::to_string(i))).string());
  ASSERT_EQ(run(with(merge, {"--out", (dir_ / "merged").string()}), &err), 0) << err;

  const auto first = outputs("j1");
  const auto header = first.first.substr(0, first.first.find('\n'));
  EXPECT_EQ(header,
            "point,rtt_ms,rate_mbps,loss,fps,body_bytes,variant,runs,failures,median_ms,q1_ms,q3_"
            "ms,min_ms,max_ms,"
            "p95_ms,p99_ms,median_frames,p99_frames");
  EXPECT_EQ(std::count(first.first.begin(), first.first.end(), '\n'), 1 + 8 * 4);
  EXPECT_EQ(std::count(first.second.begin(), first.second.end(), '\n'), 8 * 4);
  EXPECT_NE(
      first.second.find("{\"point\":7,\"rtt_ms\":40,\"rate_mbps\":100,\"loss\":0.02,\"fps\":60,"),
      std::string::npos)
      << first.second;
  EXPECT_EQ(outputs("j2"), first);
  EXPECT_EQ(outputs("merged"), first);

  // One shard merged --partial: the header, then exactly the whole sweep's rows of its points
  // (1 and 5 of 8), as scripts/check-results.sh compares a slice with the committed tables.
  ASSERT_EQ(run({"merge", (dir_ / "s1").string(), "--partial", "--out",
                 (dir_ / "slice").string()},
                &err),
            0)
      << err;
  std::string expected_csv = header + "\n", expected_jsonl;
  std::istringstream csv_rows(first.first), jsonl_rows(first.second);
  std::string row;
  std::getline(csv_rows, row);  // the header
  while (std::getline(csv_rows, row))
    if (row.starts_with("1,") || row.starts_with("5,")) expected_csv += row + "\n";
  while (std::getline(jsonl_rows, row))
    if (row.starts_with("{\"point\":1,") || row.starts_with("{\"point\":5,"))
      expected_jsonl += row + "\n";
  EXPECT_EQ(std::count(expected_csv.begin(), expected_csv.end(), '\n'), 1 + 2 * 4);
  EXPECT_EQ(outputs("slice"), std::pair(expected_csv, expected_jsonl));
}

// A simulated load over the number of clients: every client's samples count in its cells, and the
// output does not depend on how many points run at once.
TEST_F(Sweep, AClientsAxisLoadsThePathAndIsByteIdenticalForJobs) {
  const std::vector<std::string> args = {
      "sweep",  scenario().string(), "--axis", "rtt=40ms", "--axis", "rate=10Mbit",
      "--axis", "clients=1,3",       "--seed", "5",        "-q"};
  std::string err;
  ASSERT_EQ(run(with(args, {"--out", (dir_ / "c1").string(), "--jobs", "1"}), &err), 0) << err;
  ASSERT_EQ(run(with(args, {"--out", (dir_ / "c2").string(), "--jobs", "2"}), &err), 0) << err;
  const auto csv = outputs("c1").first;
  EXPECT_EQ(outputs("c2"), outputs("c1"));
  // Rows: point,rtt_ms,rate_mbps,clients,fps,body_bytes,variant,runs,failures,...
  std::map<std::string, std::pair<int, double>> runs_and_median;  // "clients/variant/bytes"
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_NE(line.find(",clients,"), std::string::npos) << line;
  while (std::getline(lines, line)) {
    std::vector<std::string> f;
    std::istringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 17u) << line;
    EXPECT_EQ(f[8], "0") << "failures: " << line;
    runs_and_median[f[3] + "/" + f[6] + "/" + f[5]] = {std::stoi(f[7]), std::stod(f[9])};
  }
  for (const char* cell : {"c3_coop/65536", "nat_coop/65536", "c3_coop/0"}) {
    const auto one = runs_and_median.at(std::string("1/") + cell);
    const auto three = runs_and_median.at(std::string("3/") + cell);
    EXPECT_EQ(one.first, 2) << cell;
    EXPECT_EQ(three.first, 6) << cell << ": three clients' runs";
  }
  // 64 KiB downloads at 10 Mbit/s: the three clients start within one frame of each other, so
  // their downloads overlap and share the downlink: each takes at least a frame longer than alone.
  // The link is work-conserving, so the others' two downloads (46 segments each, ~55 ms on the
  // wire) delay one client's by at most their wire time, plus the frame that observes it.
  // (How the share splits is tests/sim/clients_test.cpp's.)
  constexpr double kFrameMs = 1000.0 / 60;
  // Segments x (payload + TCP/IP + PPP headers) in bits, over 10 Mbit/s, in ms.
  const double wire_ms = 46 * (1448 + 52 + 2) * 8 / 10e3;
  for (const char* variant : {"c3_coop", "nat_coop"}) {
    const double one = runs_and_median.at(std::string("1/") + variant + "/65536").second;
    const double three = runs_and_median.at(std::string("3/") + variant + "/65536").second;
    EXPECT_GE(three, one + kFrameMs - 1e-3) << variant;
    EXPECT_LE(three, one + 2 * wire_ms + kFrameMs) << variant;
  }
}

TEST_F(Sweep, ResumesWithoutRedoingFinishedPoints) {
  std::string err;
  ASSERT_EQ(run(with(sweep_args("r"), {"--limit", "3"}), &err), 0) << err;
  EXPECT_NE(err.find("ran 3, skipped 0 already done; 5 left"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "r" / "sweep.csv"));
  // A point file is replaced by rename when rewritten, so its inode tells whether it was redone.
  std::map<fs::path, ino_t> inodes;
  for (const auto& f : fs::directory_iterator(dir_ / "r" / "points")) {
    struct stat st {};
    ASSERT_EQ(::stat(f.path().c_str(), &st), 0);
    inodes[f.path()] = st.st_ino;
  }
  ASSERT_EQ(inodes.size(), 3u);

  ASSERT_EQ(run(sweep_args("r"), &err), 0) << err;
  EXPECT_NE(err.find("ran 5, skipped 3 already done"), std::string::npos) << err;
  for (const auto& [path, inode] : inodes) {
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_ino, inode) << path;
  }
  ASSERT_EQ(run(sweep_args("r"), &err), 0) << err;
  EXPECT_NE(err.find("ran 0, skipped 8 already done"), std::string::npos) << err;

  ASSERT_EQ(run(sweep_args("fresh")), 0);
  EXPECT_EQ(outputs("r"), outputs("fresh"));
}

TEST_F(Sweep, RefusesADirectoryOfAnotherSweepAndIncompleteMerges) {
  ASSERT_EQ(run(with(sweep_args("a"), {"--shard", "0/2"})), 0);
  std::string err;
  EXPECT_EQ(run(with(sweep_args("a"), {"--runs", "3"}), &err), 2);
  EXPECT_NE(err.find("holds another sweep"), std::string::npos) << err;
  EXPECT_EQ(run({"merge", (dir_ / "a").string(), "--out", (dir_ / "m").string()}, &err), 2);
  EXPECT_NE(err.find("4 of 8 points have no result"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(dir_ / "m"));
}

TEST_F(Sweep, BadAxisSpecsGiveClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"speed=1,2",
       "--axis \"speed=1,2\": unknown axis \"speed\"; expected one of: rtt, rate, uplink, loss,"},
      {"rtt=10", "\"rtt=10\": \"10\" has no unit; rtt takes us, ms, s"},
      {"rtt=10xs", "bad unit \"xs\" in \"10xs\"; rtt takes us, ms, s"},
      {"rtt=200ms..10ms/5", "range \"200ms..10ms/5\" is empty: expected A < B"},
      {"rtt=10ms..200ms/1", "expected at least 2 points, got 1"},
      {"rtt=10ms..200ms", "has no point count; expected A..B/N"},
      {"rtt=10ms..200ms/4:lin", "expected \":log\" or nothing after the point count"},
      {"rtt=-5ms", "rtt: expected a round-trip time >= 0, got \"-5ms\""},
      {"rate=", "\"rate=\": no values"},
      {"rate=fast", "\"fast\" is not a number"},
      {"fps=29.5", "fps: expected a whole number, got \"29.5\""},
      {"fps=30,60,30", "fps value 30 appears twice"},
      {"loss=1.5", "loss: expected a loss probability from 0 to below 1"},
      {"chunk=100", "chunk: expected a download chunk size from 256 B to 16 MiB"},
      {"cc=reno", "unknown cc \"reno\"; expected one of: cubic, bbr, newreno"},
      {"variant=c3_thr", "unknown variant \"c3_thr\"; expected one of: c3_coop, nat_coop"},
  };
  for (const auto& [spec, expected] : cases) {
    std::string err;
    EXPECT_EQ(
        run({"sweep", scenario().string(), "--axis", spec, "--out", (dir_ / "bad").string()}, &err),
        2)
        << spec;
    EXPECT_NE(err.find(expected), std::string::npos) << spec << "\n" << err;
  }
  std::string err;
  EXPECT_EQ(run({"sweep", scenario().string(), "--axis", "rtt=1ms", "--axis", "rtt=2ms"}, &err), 2);
  EXPECT_NE(err.find("axis rtt is given twice"), std::string::npos) << err;
  EXPECT_EQ(
      run({"sweep", scenario().string(), "--shard", "4/4", "--out", (dir_ / "bad").string()}, &err),
      2);
  EXPECT_NE(err.find("--shard \"4/4\": expected 0 <= I < N"), std::string::npos) << err;

  std::ofstream(scenario(), std::ios::app) << "sweep: \"jitter=2\"\n";
  EXPECT_EQ(run({"sweep", scenario().string(), "--out", (dir_ / "bad").string()}, &err), 2);
  EXPECT_NE(err.find(scenario().string() + ":11: sweep[2]: \"jitter=2\": \"2\" has no unit"),
            std::string::npos)
      << err;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

}  // namespace
}  // namespace tb
