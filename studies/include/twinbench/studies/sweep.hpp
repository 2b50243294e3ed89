#pragma once
// Parameter sweeps (docs/sweeps.md): axes such as rtt, rate or fps span a grid of points; each
// point is the scenario with the point's values applied, simulated in its own worker process with
// a seed derived from the point's key. A sweep directory keeps one result file per point, so a
// re-run resumes, shards of one sweep can run on many machines, and `merge` combines them into
// sweep.csv and sweep.jsonl, byte-identical however the points were scheduled.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twinbench/studies/sweep_grammar.hpp"

namespace tb::studies {

struct SweepOptions {
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

struct MergeOptions {
  std::vector<std::string> dirs;
  std::string out;
  // The rows of the points found, in point order, the others left out (a slice of a sweep, as
  // scripts/check-results.sh compares with the committed tables); without it, a missing point
  // is an error.
  bool partial = false;
};

// Throw SweepError or ScenarioError (both InputError) for bad input, anything else on failure.
void run_sweep(const SweepOptions& args);
void merge_sweeps(const MergeOptions& args);

}  // namespace tb::studies
