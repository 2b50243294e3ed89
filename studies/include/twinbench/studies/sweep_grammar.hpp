#pragma once
// The sweep's grammar (docs/sweeps.md): axis specs such as "rtt=10ms..200ms/20", the grid points
// they span, a point applied to a scenario, and shard specs. Kept apart from running sweeps so it
// builds without the simulator (the fuzz targets parse specs; tests/fuzz).
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "scenario.pb.h"
#include "twinbench/scenario/input_error.hpp"

namespace tb::studies {

// Bad sweep input: an axis spec, a shard spec, directories of different sweeps (exit code 2).
class SweepError : public InputError {
 public:
  using InputError::InputError;
};

// At most this many points in a grid (and so in a range): a bound on memory for a typo such as
// "/1000000000", far beyond what a sweep could simulate (docs/sweeps.md).
inline constexpr std::size_t kMaxSweepPoints = 100000;

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

// Throws SweepError if the axes span more than kMaxSweepPoints points, before any is made.
void check_grid_size(const std::vector<Axis>& axes);

// The grid's points (check_grid_size first).
std::vector<Point> enumerate_points(const std::vector<Axis>& axes);

twinbench::Scenario apply_point(const twinbench::Scenario& scenario, const std::vector<Axis>& axes,
                                const Point& point);

// True when the axis takes names (cc, variant) rather than numbers.
bool takes_names(const Axis& axis);

// "I/N": shard I of N (0 <= I < N). Throws SweepError.
std::pair<std::size_t, std::size_t> parse_shard(const std::string& spec);

}  // namespace tb::studies
