// `twinbench diff BASE NEW`: two result sets of a scenario paired cell by cell; exit 1 when a cell
// regressed beyond the tolerance (docs/ci.md).
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "twinbench/scenario/text.hpp"
#include "twinbench/verdicts/result_diff.hpp"

namespace tb::app {

namespace {

struct DiffArgs {
  std::string base, next;
  std::string out;    // diff.md and diff.csv, if set
  std::string junit;  // JUnit XML, if set
  verdicts::Tolerance tolerance;
  bool quiet = false;
};

int diff_command(const DiffArgs& a) {
  const twinbench::ResultSet base = verdicts::read_result_set(a.base);
  const twinbench::ResultSet next = verdicts::read_result_set(a.next);
  const verdicts::ResultDiff diff = verdicts::diff_results(base, next, a.tolerance);
  const std::string md = verdicts::diff_markdown(diff, a.base, a.next);
  if (!a.out.empty()) {
    scenario::write_file_atomically(std::filesystem::path(a.out) / "diff.md", md);
    scenario::write_file_atomically(std::filesystem::path(a.out) / "diff.csv",
                                    verdicts::diff_csv(diff));
  }
  if (!a.junit.empty()) verdicts::write_junit(a.junit, {verdicts::diff_junit(diff, "diff " + a.base + " " + a.next)});
  std::cout << md;
  if (!a.quiet) {
    for (const auto& c : diff.cells)
      if (c.change == verdicts::Change::regressed || c.change == verdicts::Change::removed)
        std::cerr << "regressed: " << c.scenario << " " << c.cell() << ": " << c.why() << "\n";
    std::cerr << diff.summary() << "\n";
  }
  return diff.regressed() ? 1 : 0;
}

}  // namespace

Command add_diff_command(CLI::App& app) {
  auto a = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Pair two result sets cell by cell; exit 1 when a cell regressed beyond the tolerance");
  cmd->add_option("base", a->base, "The baseline: a run's --out directory or its results.json")
      ->required();
  cmd->add_option("new", a->next, "The results judged against it (same forms)")->required();
  cmd->add_option("--out", a->out, "Also write diff.md and diff.csv into this directory");
  cmd->add_option("--junit", a->junit, "Also write the cells' verdicts as JUnit XML to this file");
  add_tolerance_options(cmd, a->tolerance);
  cmd->add_flag("--quiet,-q", a->quiet, "No regressions listed on stderr");
  auto status = std::make_shared<int>(0);
  return {cmd, [a, status] { *status = diff_command(*a); }, status};
}

}  // namespace tb::app
