#pragma once
// Measured numbers against the model: the published run (`twinbench reproduce`) or any file in
// the reference CSV format (`twinbench validate`), cell by cell, under a named network profile.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "results.pb.h"
#include "twinbench/scenario/measured_csv.hpp"
#include "twinbench/scenario/profile.hpp"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/verdicts/junit.hpp"

namespace tb::studies {

using scenario::apply_profile;
using scenario::load_measured_csv;
using scenario::MeasuredCell;  // the measured cells and profiles are scenario/'s; used here by name

// A network profile (scenario/profile.hpp) by name: a built-in profile (lightsail-2026) or a file.
twinbench::Scenario load_profile(const std::string& name_or_path);

struct CellComparison {
  MeasuredCell measured;
  scenario::Summary simulated;
  double simulated_frames = 0;  // median
  double frame_ms = 0;          // the frame period of the cell (frame work when uncapped)
  double error_ms() const { return simulated.median - measured.median_ms; }
  double error_pct() const { return 100.0 * error_ms() / measured.median_ms; }
  double error_frames() const { return error_ms() / frame_ms; }
  bool within_one_frame() const;
  bool within_goal() const;  // within max(1 frame, 5 %)
  // Whether the simulated median lies within the measured interquartile range (to the 0.1 ms the
  // reference files round to): an error the measurement's own spread cannot tell from zero.
  // Unknown without a five-number summary.
  std::optional<bool> within_measured_iqr() const;
};

struct Comparison {
  std::string reference = "published";  // what the compared medians are: "published" or "measured"
  std::string profile;
  std::string profile_description;
  std::vector<CellComparison> cells;
  double median_abs_pct() const;
  double max_abs_pct() const;
  std::size_t within_one_frame() const;
  std::size_t within_goal() const;
  std::size_t with_summary() const;  // cells whose measured five-number summary is known
  std::size_t within_measured_iqr() const;
};

// Simulates, under `profile`, the published scenarios restricted to the cells in `measured`
// (same protocol: variants in interleave order, runs, warmups, sessions), and compares.
// Throws std::runtime_error naming the line of a cell that is not part of a published scenario.
struct CompareOptions {
  unsigned jobs = 1;
  bool progress = false;
  // Fewer measured rounds / warmups than the published protocol (calibration only; 0 / unset:
  // the scenario's own). Without loss or jitter every measured round of a cell after its warmups
  // is typically identical, so a few rounds give the same medians at a fraction of the cost.
  std::uint32_t runs = 0;
  std::optional<std::uint32_t> warmups;
};
Comparison simulate_and_compare(const std::vector<MeasuredCell>& measured,
                                const twinbench::Scenario& profile, const CompareOptions& options);
inline Comparison simulate_and_compare(const std::vector<MeasuredCell>& measured,
                                       const twinbench::Scenario& profile, unsigned jobs,
                                       bool progress) {
  return simulate_and_compare(measured, profile, CompareOptions{jobs, progress, 0, std::nullopt});
}

std::string comparison_markdown(const Comparison& c, const std::string& title);
// The reference columns, then published_ms,simulated_ms and the errors.
std::string comparison_csv(const Comparison& c);
// Writes DIR/reproduction.{csv,md} and, when gnuplot is available, DIR/reproduction.{png,svg}.
void write_comparison(const Comparison& c, const std::string& dir, const std::string& title);

// The published run: its medians and five-number summaries, built in.
std::vector<MeasuredCell> published_cells();

// One JUnit test case per cell, failed when it is outside max(1 frame, 5 %) of the measured median.
verdicts::JUnitSuite comparison_junit(const Comparison& comparison, const std::string& suite_name);

}  // namespace tb::studies
