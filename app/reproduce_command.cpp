// `twinbench reproduce` (the published run) and `twinbench validate` (a measured file): measured
// cells against the model, cell by cell.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "twinbench/studies/reproduce.hpp"
#include "twinbench/verdicts/junit.hpp"

namespace tb::app {

namespace {

struct ReproduceArgs {
  std::string measured;  // validate only
  std::string profile = "lightsail-2026";
  std::string out = "out/reproduction";
  unsigned jobs = all_cores();
  bool quiet = false;
  std::uint32_t runs = 0;  // measured rounds per cell; 0: the published protocol's
  std::string junit;       // a JUnit XML report of the cells, if set
};

void reproduce_command(const ReproduceArgs& a, bool published) {
  const std::vector<studies::MeasuredCell> measured =
      published ? studies::published_cells() : studies::load_measured_csv(a.measured);
  const twinbench::Scenario profile = studies::load_profile(a.profile);
  std::string title = published ? "The published Lightsail run, reproduced in simulation"
                                : "Validation of " + a.measured + " against the model";
  if (a.runs) title += fmt::format(" ({} measured rounds per cell, not the protocol's)", a.runs);
  studies::Comparison comparison = studies::simulate_and_compare(
      measured, profile, studies::CompareOptions{a.jobs, !a.quiet, a.runs, std::nullopt});
  if (!published) comparison.reference = "measured";
  studies::write_comparison(comparison, a.out, title);
  if (!a.junit.empty()) verdicts::write_junit(a.junit, {studies::comparison_junit(comparison, title)});
  std::cout << studies::comparison_markdown(comparison, title);
  if (!a.quiet) std::cerr << "wrote " << a.out << "/reproduction.{csv,md,png,svg}\n";
}

void add_common_options(CLI::App* cmd, ReproduceArgs& a) {
  cmd->add_option("--profile", a.profile, "Network profile: built-in name or textproto file")
      ->capture_default_str();
  cmd->add_option("--out", a.out, "Output directory")->capture_default_str();
  cmd->add_option("--jobs,-j", a.jobs, "Simulations run at once")->check(CLI::Range(1u, 256u));
  cmd->add_flag("--quiet,-q", a.quiet, "No progress on stderr");
  cmd->add_option("--junit", a.junit, "Also write the cells' verdicts as JUnit XML to this file");
}

}  // namespace

Command add_reproduce_command(CLI::App& app) {
  auto a = std::make_shared<ReproduceArgs>();
  auto* cmd = app.add_subcommand("reproduce",
                                 "Simulate the published run's three scenarios and compare them "
                                 "with its numbers, cell by cell");
  add_common_options(cmd, *a);
  cmd->add_option(
      "--runs", a->runs,
      "Measured rounds per cell instead of the published 25 (quicker; said in the report)");
  return {cmd, [a] { stop_on_signals([&] { reproduce_command(*a, /*published=*/true); }); }};
}

Command add_validate_command(CLI::App& app) {
  auto a = std::make_shared<ReproduceArgs>();
  a->out = "out/validation";
  auto* cmd = app.add_subcommand(
      "validate",
      "Compare measured medians (reference CSV format or a results.csv) with the model");
  cmd->add_option("measured", a->measured, "CSV file of measured cells")->required();
  add_common_options(cmd, *a);
  cmd->add_option(
      "--runs", a->runs,
      "Measured rounds per cell instead of the protocol's (quicker; said in the report)");
  return {cmd, [a] { stop_on_signals([&] { reproduce_command(*a, /*published=*/false); }); }};
}

}  // namespace tb::app
