// The studies' commands (compare, calibrate, sweep, merge): their options here, their work in
// studies/, which does not link CLI11.
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "twinbench/studies/calibrate.hpp"
#include "twinbench/studies/sweep.hpp"
#include "twinbench/studies/twin_compare.hpp"

namespace tb::app {

Command add_compare_command(CLI::App& app) {
  auto a = std::make_shared<studies::TwinCompareOptions>();
  a->jobs = all_cores();
  auto* cmd = app.add_subcommand(
      "compare",
      "Run a scenario (or a grid of it) in simulation and on the emulated path (real kernel "
      "TCP; needs CAP_NET_ADMIN) and compare them cell by cell");
  cmd->add_option("scenario", a->scenario, "Scenario textproto file (with a network section)")
      ->required();
  cmd->add_option("--axis", a->axes,
                  "NAME=VALUES, as for sweep (repeatable): the grid to compare over");
  cmd->add_option("--out", a->out, "Output directory (default out/<scenario>-compare)");
  cmd->add_option("--seed", a->seed, "Seed of both twins (loss and jitter)");
  cmd->add_option("--runs", a->runs, "Override the scenario's measured rounds");
  cmd->add_option("--warmups", a->warmups, "Override the scenario's warmup rounds");
  cmd->add_option("--jobs,-j", a->jobs,
                  "Simulation processes at once (the emulated runs go one at a time)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--emulated-from", a->emulated_from,
                  "An earlier compare's output directory: judge the simulation against its "
                  "recorded emulated runs instead of running the emulated path (no root needed)")
      ->check(CLI::ExistingDirectory);
  cmd->add_flag("--quiet,-q", a->quiet, "No progress on stderr");
  cmd->add_option("--junit", a->junit, "Also write the cells' verdicts as JUnit XML to this file");
  return {cmd, [a] { stop_on_signals([&] { studies::run_twin_compare(*a); }); }};
}

Command add_calibrate_command(CLI::App& app) {
  auto a = std::make_shared<studies::CalibrateOptions>();
  a->jobs = all_cores();
  auto* cmd = app.add_subcommand(
      "calibrate",
      "Fit a profile's global parameters on some published cells; report the held-out cells");
  cmd->add_option("--profile", a->profile, "Starting profile: built-in name or textproto file")
      ->capture_default_str();
  cmd->add_option("--fit", a->fit, "Cells fitted: scenario[/fps[/bytes[/variant]]],... ('*' any)")
      ->capture_default_str();
  cmd->add_option("--holdout", a->holdout, "Cells reported, not fitted: patterns, or rest")
      ->capture_default_str();
  cmd->add_option("--params", a->params, "Parameters fitted, comma-separated (default: all)");
  cmd->add_option(
      "--starts", a->starts,
      "NAME=V1,V2,...: one descent per starting value of a fitted parameter; the best wins");
  cmd->add_option("--runs", a->runs, "Measured rounds per cell during the search")
      ->capture_default_str();
  cmd->add_option("--passes", a->passes, "Coordinate-descent passes at most")
      ->capture_default_str();
  cmd->add_option("--out", a->out, "The fitted profile (textproto)")->capture_default_str();
  cmd->add_option("--jobs,-j", a->jobs, "Simulations run at once")->check(CLI::Range(1u, 256u));
  cmd->add_flag("--quiet,-q", a->quiet, "No progress on stderr");
  return {cmd, [a] { stop_on_signals([&] { studies::calibrate(*a); }); }};
}

Command add_sweep_command(CLI::App& app) {
  auto a = std::make_shared<studies::SweepOptions>();
  a->jobs = all_cores();
  auto* cmd =
      app.add_subcommand("sweep", "Simulate a scenario over a grid of parameters (docs/sweeps.md)");
  cmd->add_option("scenario", a->scenario, "Scenario textproto file")->required();
  cmd->add_option(
      "--axis", a->axes,
      "NAME=VALUES, e.g. rtt=10ms..200ms/20, rate=10Mbit,1Gbit, fps=0,30,60 (repeatable; "
      "replaces the scenario's axis of that name)");
  cmd->add_option("--out", a->out, "Sweep directory (default out/<scenario>-sweep)");
  cmd->add_option("--seed", a->seed, "Seed from which every point's seed is derived");
  cmd->add_option("--jobs,-j", a->jobs, "Points simulated at once (default: all cores)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--runs", a->runs, "Override the scenario's measured rounds");
  cmd->add_option("--warmups", a->warmups, "Override the scenario's warmup rounds");
  cmd->add_option("--shard", a->shard,
                  "I/N: run only the points whose index % N == I (0 <= I < N)");
  cmd->add_option("--limit", a->limit, "Run at most this many points now; a re-run resumes");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress bar");
  return {cmd, [a] { stop_on_signals([&] { studies::run_sweep(*a); }); }};
}

Command add_merge_command(CLI::App& app) {
  auto a = std::make_shared<studies::MergeOptions>();
  auto* cmd = app.add_subcommand("merge", "Combine the point results of sweep shard directories");
  cmd->add_option("dirs", a->dirs, "Sweep directories (shards of one sweep)")->required();
  cmd->add_option("--out", a->out, "Where sweep.csv and sweep.jsonl go")->required();
  cmd->add_flag("--partial", a->partial,
                "Write the rows of the points found, leaving the others out (a slice of a sweep)");
  return {cmd, [a] { studies::merge_sweeps(*a); }};
}

}  // namespace tb::app
