#pragma once
// Two result sets of one scenario paired cell by cell (`twinbench diff`, `run --baseline`): what
// moved, judged with the project's criterion: capped cells by their median frame count, uncapped
// cells by their median time, each within max(1 frame, 5 %) of the baseline (docs/ci.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "results.pb.h"
#include "twinbench/verdicts/criterion.hpp"
#include "twinbench/verdicts/junit.hpp"

namespace tb::verdicts {

enum class Change {
  same,       // identical medians and failure counts
  within,     // moved, within the tolerance
  improved,   // faster beyond the tolerance, or fewer failures
  regressed,  // slower beyond the tolerance, or more failures
  added,      // only in the new set
  removed,    // only in the baseline: a cell no longer measured counts as a regression
};
std::string_view change_name(Change change);

struct CellDiff {
  std::string scenario, variant;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  // Median ms and frames of each side's successful measured requests; nullopt when none.
  std::optional<double> base_ms, new_ms, base_frames, new_frames;
  std::size_t base_failures = 0, new_failures = 0;
  double frame_ms = 0;  // one frame of the cell (the new set's scenario)
  double allowed = 0;   // the tolerance, in the judged unit (frames if capped, else ms)
  Change change = Change::same;

  bool judged_in_frames() const { return fps > 0; }
  std::string cell() const;  // "nat_coop, 60 fps, 1 MB"
  std::string why() const;   // "median 23 frames, baseline 20 (+3, allowed 1)"
};

struct ResultDiff {
  std::vector<CellDiff> cells;  // the new set's order, then cells only in the baseline
  Tolerance tolerance;
  std::size_t count(Change change) const;
  bool regressed() const { return count(Change::regressed) + count(Change::removed) > 0; }
  // "2 of 24 cells regressed (nat_coop, 60 fps, 1 MB; ...), 1 improved, 21 unchanged or within
  // max(1 frame, 5 %)"
  std::string summary() const;
};

// A result set given as a run's output directory (its results.json) or the file itself; throws
// tb::InputError naming the path when it is neither.
twinbench::ResultSet read_result_set(const std::string& dir_or_file);

// Cells pair by (scenario, frame cap, body size, variant).
ResultDiff diff_results(const twinbench::ResultSet& base, const twinbench::ResultSet& next,
                        const Tolerance& tolerance = {});

// `heading`: the section's first line ("# twinbench diff"; run --baseline's is a "##" section).
std::string diff_markdown(const ResultDiff& diff, const std::string& base_name,
                          const std::string& new_name,
                          std::string_view heading = "# twinbench diff");
std::string diff_csv(const ResultDiff& diff);
JUnitSuite diff_junit(const ResultDiff& diff, const std::string& suite_name);

}  // namespace tb::verdicts
