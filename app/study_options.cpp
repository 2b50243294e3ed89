// The command-line options of the studies' commands (sweep, merge, compare): CLI11 stays here.
#include "study_options.hpp"

#include <algorithm>
#include <thread>

#include <CLI/CLI.hpp>

namespace tb::app {

using studies::MergeArgs;
using studies::SweepArgs;
using studies::TwinCompareArgs;

CLI::App* add_sweep_subcommand(CLI::App& app, SweepArgs& a) {
  a.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* cmd = app.add_subcommand("sweep", "Simulate a scenario over a grid of parameters (docs/sweeps.md)");
  cmd->add_option("scenario", a.scenario, "Scenario textproto file")->required();
  cmd->add_option("--axis", a.axes,
                  "NAME=VALUES, e.g. rtt=10ms..200ms/20, rate=10Mbit,1Gbit, fps=0,30,60 (repeatable; "
                  "replaces the scenario's axis of that name)");
  cmd->add_option("--out", a.out, "Sweep directory (default out/<scenario>-sweep)");
  cmd->add_option("--seed", a.seed, "Seed from which every point's seed is derived");
  cmd->add_option("--jobs,-j", a.jobs, "Points simulated at once (default: all cores)")->check(CLI::Range(1u, 256u));
  cmd->add_option("--runs", a.runs, "Override the scenario's measured rounds");
  cmd->add_option("--warmups", a.warmups, "Override the scenario's warmup rounds");
  cmd->add_option("--shard", a.shard, "I/N: run only the points whose index % N == I (0 <= I < N)");
  cmd->add_option("--limit", a.limit, "Run at most this many points now; a re-run resumes");
  cmd->add_flag("--quiet,-q", a.quiet, "No progress bar");
  return cmd;
}

CLI::App* add_merge_subcommand(CLI::App& app, MergeArgs& a) {
  auto* cmd = app.add_subcommand("merge", "Combine the point results of sweep shard directories");
  cmd->add_option("dirs", a.dirs, "Sweep directories (shards of one sweep)")->required();
  cmd->add_option("--out", a.out, "Where sweep.csv and sweep.jsonl go")->required();
  return cmd;
}

CLI::App* add_twin_compare_subcommand(CLI::App& app, TwinCompareArgs& a) {
  a.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* cmd = app.add_subcommand("compare",
                                 "Run a scenario (or a grid of it) in simulation and on the emulated path (real kernel "
                                 "TCP; needs CAP_NET_ADMIN) and compare them cell by cell");
  cmd->add_option("scenario", a.scenario, "Scenario textproto file (with a network section)")->required();
  cmd->add_option("--axis", a.axes, "NAME=VALUES, as for sweep (repeatable): the grid to compare over");
  cmd->add_option("--out", a.out, "Output directory (default out/<scenario>-compare)");
  cmd->add_option("--seed", a.seed, "Seed of both twins (loss and jitter)");
  cmd->add_option("--runs", a.runs, "Override the scenario's measured rounds");
  cmd->add_option("--warmups", a.warmups, "Override the scenario's warmup rounds");
  cmd->add_option("--jobs,-j", a.jobs, "Simulation processes at once (the emulated runs go one at a time)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_flag("--quiet,-q", a.quiet, "No progress on stderr");
  return cmd;
}

}  // namespace tb::app
