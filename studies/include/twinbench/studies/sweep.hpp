#pragma once
// Parameter sweeps (docs/sweeps.md): axes such as rtt, rate or fps span a grid of points; each
// point is the scenario with the point's values applied, simulated in its own worker process with
// a seed derived from the point's key. A sweep directory keeps one result file per point, so a
// re-run resumes, shards of one sweep can run on many machines, and `merge` combines them into
// sweep.csv and sweep.jsonl, byte-identical however the points were scheduled.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "twinbench/scenario/input_error.hpp"

namespace tb::studies {

// Bad sweep input: an axis spec, a shard spec, directories of different sweeps (exit code 2).
class SweepError : public InputError {
 public:
  using InputError::InputError;
};

struct AxisValue {
  std::string text;  // canonical, in the axis's base unit ("20" for 20 ms, "bbr"): keys and columns
  double number = 0;  // numeric axes: the value in the base unit
};

struct Axis {
  std::string name;    // "rtt"
  std::string column;  // "rtt_ms": the result column, and the name in point keys
  std::string spec;    // as given: "rtt=10ms..200ms/20"
  std::vector<AxisValue> values;
};

// Parses "NAME=VALUES": VALUES is a comma-separated list of values and ranges "A..B/N" (N points,
// linear) or "A..B/N:log" (geometric). `scenario` supplies the names a `variant` axis may take.
// Throws SweepError saying what is wrong with the spec.
Axis parse_axis(const std::string& spec, const twinbench::Scenario& scenario);

// A grid point: one value index per axis. Points are numbered with the first axis varying slowest.
struct Point {
  std::size_t index = 0;
  std::vector<std::size_t> at;
  std::string key;  // "rtt_ms=20,rate_mbps=100,fps=60": names the point's file and seeds it
};

std::vector<Point> enumerate_points(const std::vector<Axis>& axes);

twinbench::Scenario apply_point(const twinbench::Scenario& scenario, const std::vector<Axis>& axes,
                                const Point& point);

struct SweepArgs {
  std::string scenario;
  std::vector<std::string> axes;  // --axis specs; they replace the file's axes of the same name
  std::string out;
  std::uint64_t seed = 1;
  std::optional<std::uint32_t> runs, warmups;
  unsigned jobs = 1;
  std::string shard;  // "I/N": only points whose index % N == I; empty: every point
  std::optional<std::size_t> limit;
  bool quiet = false;
};

struct MergeArgs {
  std::vector<std::string> dirs;
  std::string out;
};

// Throw SweepError or ScenarioError (both InputError) for bad input, anything else on failure.
void sweep_command(const SweepArgs& args);
void merge_command(const MergeArgs& args);

}  // namespace tb::studies
