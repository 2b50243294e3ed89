// Fuzz target: the sweep's grammar fed a user's --axis and --shard specs: each input line is one
// axis spec (the last may be a shard spec instead), the grid they span is enumerated and each
// point applied to a scenario. Bad specs must end in tb::InputError, never in a crash, another
// exception or a grid too large to hold.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/text.hpp"
#include "twinbench/studies/sweep_grammar.hpp"

namespace {

// The published latency scenario (valid, with variants), loaded once; outside the try below, so a
// base that fails to load stops the fuzzer instead of making every input an early error.
const twinbench::Scenario& base_scenario() {
  static const twinbench::Scenario s =
      tb::scenario::load_scenario(TWINBENCH_SOURCE_DIR "/scenarios/published/latency.textproto");
  return s;
}

constexpr std::size_t kEnumerateAtMost = 4096;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const twinbench::Scenario& base = base_scenario();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<tb::studies::Axis> axes;
    for (std::string_view line : tb::scenario::split(text, '\n')) {
      if (line.find('/') != std::string_view::npos && line.find('=') == std::string_view::npos)
        tb::studies::parse_shard(std::string(line));
      else
        axes.push_back(tb::studies::parse_axis(std::string(line), base));
    }
    if (axes.empty()) return 0;
    tb::studies::check_grid_size(axes);  // beyond kMaxSweepPoints: an InputError, nothing made
    // Grids above kEnumerateAtMost points (up to kMaxSweepPoints, 100,000) are checked but not
    // enumerated: enumerating is one loop whose code is the same at any size, and the fuzzer, which
    // drifts towards the largest grids, spent milliseconds per execution on them under ASan, down
    // to ~300 executions a second, most of it in allocation, not in the grammar it is here for.
    std::size_t grid_points = 1;
    for (const auto& axis : axes) grid_points *= axis.values.size();
    if (grid_points > kEnumerateAtMost) return 0;
    // Every point is enumerated (its key formatted); the scenario is applied at the grid's first
    // and last 32 points only: applying copies the whole scenario, so applying all of a large grid
    // cost most of the run while every value of every axis is still applied on grids this size or
    // smaller, where the fuzzer's mutations mostly land.
    const auto points = tb::studies::enumerate_points(axes);
    for (std::size_t i = 0; i < points.size(); ++i)
      if (i < 32 || points.size() - i <= 32) tb::studies::apply_point(base, axes, points[i]);
  } catch (const tb::InputError&) {
  }
  return 0;
}
