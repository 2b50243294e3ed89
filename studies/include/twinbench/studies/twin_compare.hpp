#pragma once
// `twinbench compare`: one scenario (or a grid of it, with the sweep's axes) run by both twins,
// the ns-3 simulation and the emulated path (real kernel TCP), with the same seed, side by side
// per cell and variant: medians and quartiles, the difference in ms, % and frames, and two
// verdicts: within max(1 frame, 5 %) of the emulated path in time, and (capped cells) median frame
// counts at most one apart.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results.pb.h"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/verdicts/junit.hpp"

namespace tb::studies {

struct TwinCell {
  std::string point;  // the grid point's key ("rtt_ms=40,rate_mbps=100"); empty without axes
  std::string scenario;
  std::string variant;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  scenario::Summary simulated{};
  scenario::Summary emulated{};
  double frame_ms = 0;  // one frame at this cap (uncapped: the scenario's frame work)
  // Median frames per request of each twin (capped cells: what the model claims to reproduce).
  double simulated_frames = 0;
  double emulated_frames = 0;
  bool path_valid = true;
  double lateness_p99_us = 0;
  // Set when either twin has no successful sample of the cell (the first error): the cell counts
  // as outside, with no numbers.
  std::string missing;

  double diff_ms() const { return simulated.median - emulated.median; }
  double diff_percent() const { return 100 * diff_ms() / emulated.median; }
  double diff_frames() const { return diff_ms() / frame_ms; }
  // |diff| <= max(1 frame, 5 % of the emulated median), in milliseconds. A missing cell is not.
  bool within_time() const;
  // Capped cells only: the two twins' median frame counts differ by at most one (the model
  // claims frames; a live frame measures its period plus the frame loop's microseconds of
  // lateness, so one frame apart can measure 16.674 ms at 60 fps, outside in time). Uncapped
  // cells have no frame count to judge: nullopt.
  std::optional<bool> within_frames() const;
};

// Pairs the two twins' samples cell by cell, in the scenario's order; a cell either twin has no
// successful sample of is kept, marked `missing`. Throws std::runtime_error when the two
// result sets are of different scenarios.
std::vector<TwinCell> pair_cells(const std::string& point, const twinbench::ResultSet& simulated,
                                 const twinbench::ResultSet& emulated);

// How many cells each criterion holds for; the compare report's summary line.
struct CompareCounts {
  std::size_t cells = 0, within_time = 0, capped = 0, within_frames = 0;
  std::string summary() const;  // "N of M cells (P %) within max(1 frame, 5 %) in time; ..."
};
CompareCounts count_within(const std::vector<TwinCell>& cells);

std::string twin_csv(const std::vector<TwinCell>& cells);
// `notes`: lines after the table (settings not applied, path validity), as Markdown.
std::string twin_markdown(const std::vector<TwinCell>& cells, const std::string& title,
                          const std::vector<std::string>& notes);

// One JUnit test case per cell, failed when it is outside max(1 frame, 5 %) in time (the numbers
// and the frame-count verdict in the message).
verdicts::JUnitSuite twin_junit(const std::vector<TwinCell>& cells, const std::string& suite_name);

struct TwinCompareOptions {
  std::string scenario;
  std::vector<std::string> axes;
  std::string out;
  std::uint64_t seed = 1;
  std::optional<std::uint32_t> runs, warmups;
  unsigned jobs = 1;
  bool quiet = false;
  // An earlier compare's --out: its emulated results (points/<point>/emulated/results.json) stand
  // in for running the emulated path, so a model change is judged against the same kernel run.
  std::string emulated_from;
  std::string junit;  // a JUnit XML report of the cells, if set
};

void run_twin_compare(const TwinCompareOptions& args);

}  // namespace tb::studies
