#include "twinbench/verdicts/result_diff.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <fmt/format.h>

#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/stats.hpp"

namespace tb::verdicts {
namespace {

std::optional<double> median(const std::vector<double>& values) {
  if (values.empty()) return std::nullopt;
  return scenario::summarize(values).median;
}

std::string value_text(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f}", *v) : std::string();
}

// The judged medians of a cell: frames when capped, else ms.
std::pair<std::optional<double>, std::optional<double>> judged(const CellDiff& c) {
  return c.judged_in_frames() ? std::pair{c.base_frames, c.new_frames}
                              : std::pair{c.base_ms, c.new_ms};
}

Change judge(const CellDiff& c, const Tolerance& tolerance, double& allowed_out) {
  const auto [base, next] = judged(c);
  if (c.new_failures > c.base_failures) return Change::regressed;
  if (!base || !next) {  // one side without a successful request
    if (!base && !next) return Change::same;
    return next ? Change::improved : Change::regressed;
  }
  const double frame = c.judged_in_frames() ? 1.0 : c.frame_ms;
  allowed_out = allowed(*base, frame, tolerance);
  const bool failures_fell = c.new_failures < c.base_failures;
  if (*next == *base && c.base_ms == c.new_ms && c.base_frames == c.new_frames)
    return failures_fell ? Change::improved : Change::same;
  if (within(*next - *base, *base, frame, tolerance))
    return failures_fell ? Change::improved : Change::within;
  return *next > *base ? Change::regressed : Change::improved;
}

}  // namespace

twinbench::ResultSet read_result_set(const std::string& dir_or_file) {
  const std::filesystem::path path(dir_or_file);
  return scenario::read_results_json(std::filesystem::is_directory(path) ? path / "results.json"
                                                                         : path);
}

std::string_view change_name(Change change) {
  switch (change) {
    case Change::same: return "same";
    case Change::within: return "within";
    case Change::improved: return "improved";
    case Change::regressed: return "regressed";
    case Change::added: return "added";
    case Change::removed: return "removed";
  }
  return "?";
}

std::string CellDiff::cell() const {
  return scenario::cell_label(variant, fps, body_bytes);
}

std::string CellDiff::why() const {
  if (change == Change::added) return "only in the new results";
  if (change == Change::removed) return "only in the baseline";
  const auto [base, next] = judged(*this);
  const char* unit = judged_in_frames() ? "frames" : "ms";
  std::string text;
  if (base && next)
    text = fmt::format("median {:.1f} {}, baseline {:.1f} ({:+.1f}, allowed {:.1f})", *next, unit,
                       *base, *next - *base, allowed);
  else
    text = fmt::format("median {} {}, baseline {}", next ? value_text(next) : "none", unit,
                       base ? value_text(base) : "none");
  if (base_failures > 0 || new_failures > 0)
    text += fmt::format("; failed requests {}, baseline {}", new_failures, base_failures);
  return text;
}

std::size_t ResultDiff::count(Change change) const {
  return static_cast<std::size_t>(
      std::count_if(cells.begin(), cells.end(), [&](const auto& c) { return c.change == change; }));
}

std::string ResultDiff::summary() const {
  const std::size_t worse = count(Change::regressed) + count(Change::removed);
  std::string which;
  for (const auto& c : cells)
    if (c.change == Change::regressed || c.change == Change::removed)
      which += (which.empty() ? "" : "; ") + c.cell();
  const std::string criterion =
      fmt::format("max({:g} frame, {:g} %)", tolerance.frames, tolerance.percent);
  std::string text = worse == 0 ? fmt::format("no regression in {} cells", cells.size())
                                : fmt::format("{} of {} cells regressed ({})", worse, cells.size(),
                                              which);
  text += fmt::format(", {} improved, {} the same, {} moved within {}", count(Change::improved),
                      count(Change::same), count(Change::within), criterion);
  if (count(Change::added) > 0) text += fmt::format(", {} new", count(Change::added));
  return text;
}

ResultDiff diff_results(const twinbench::ResultSet& base, const twinbench::ResultSet& next,
                        const Tolerance& tolerance) {
  ResultDiff diff;
  diff.tolerance = tolerance;
  std::map<std::string, const scenario::Cell*> base_cells;
  const std::vector<scenario::Cell> before = scenario::collect_cells(base);
  const std::vector<scenario::Cell> after = scenario::collect_cells(next);
  for (const auto& c : before)
    base_cells[scenario::cell_key(c.scenario, c.fps, c.body_bytes, c.variant)] = &c;
  const auto fill = [&](const scenario::Cell& c) {
    CellDiff d;
    d.scenario = c.scenario;
    d.variant = c.variant;
    d.fps = c.fps;
    d.body_bytes = c.body_bytes;
    return d;
  };
  for (const auto& c : after) {
    CellDiff d = fill(c);
    d.new_ms = median(c.elapsed_ms);
    d.new_frames = median(c.frames);
    d.new_failures = c.failures;
    d.frame_ms = frame_ms(next.scenario(), c.fps);
    const auto it = base_cells.find(scenario::cell_key(c.scenario, c.fps, c.body_bytes, c.variant));
    if (it == base_cells.end()) {
      d.change = Change::added;
    } else {
      d.base_ms = median(it->second->elapsed_ms);
      d.base_frames = median(it->second->frames);
      d.base_failures = it->second->failures;
      d.change = judge(d, tolerance, d.allowed);
      base_cells.erase(it);
    }
    diff.cells.push_back(std::move(d));
  }
  for (const auto& c : before) {  // only in the baseline, in its order
    if (!base_cells.contains(scenario::cell_key(c.scenario, c.fps, c.body_bytes, c.variant)))
      continue;
    CellDiff d = fill(c);
    d.base_ms = median(c.elapsed_ms);
    d.base_frames = median(c.frames);
    d.base_failures = c.failures;
    d.frame_ms = frame_ms(base.scenario(), c.fps);
    d.change = Change::removed;
    diff.cells.push_back(std::move(d));
  }
  return diff;
}

std::string diff_markdown(const ResultDiff& diff, const std::string& base_name,
                          const std::string& new_name, std::string_view heading) {
  std::string out = fmt::format(
      "{}\n\nBaseline {}, new {}: {}.\n\nCapped cells are judged by their median "
      "frame count, uncapped cells by their median time; medians of the measured runs.\n\n"
      "| Scenario | Cell | Change | Baseline ms | New ms | Baseline frames | New frames | Why |\n"
      "|---|---|---|---:|---:|---:|---:|---|\n",
      heading, scenario::md_cell(base_name), scenario::md_cell(new_name), diff.summary());
  for (const auto& c : diff.cells) {
    const bool bad = c.change == Change::regressed || c.change == Change::removed;
    out += fmt::format("| {} | {} | {}{}{} | {} | {} | {} | {} | {} |\n",
                       scenario::md_cell(c.scenario), scenario::md_cell(c.cell()),
                       bad ? "**" : "", change_name(c.change), bad ? "**" : "",
                       value_text(c.base_ms), value_text(c.new_ms), value_text(c.base_frames),
                       value_text(c.new_frames), scenario::md_cell(c.why()));
  }
  return out;
}

std::string diff_csv(const ResultDiff& diff) {
  std::string out =
      "scenario,fps,body_bytes,variant,change,base_median_ms,new_median_ms,base_median_frames,"
      "new_median_frames,base_failures,new_failures,judged_in,allowed\n";
  for (const auto& c : diff.cells)
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{}\n", scenario::csv_field(c.scenario),
                       c.fps, c.body_bytes, scenario::csv_field(c.variant), change_name(c.change),
                       value_text(c.base_ms), value_text(c.new_ms), value_text(c.base_frames),
                       value_text(c.new_frames), c.base_failures, c.new_failures,
                       c.judged_in_frames() ? "frames" : "ms",
                       c.change == Change::added || c.change == Change::removed
                           ? std::string()
                           : fmt::format("{:.3f}", c.allowed));
  return out;
}

JUnitSuite diff_junit(const ResultDiff& diff, const std::string& suite_name) {
  JUnitSuite suite{suite_name, {}};
  for (const auto& c : diff.cells) {
    JUnitCase t{"twinbench.diff." + c.scenario, c.cell(), std::nullopt,
                std::string(change_name(c.change)) + ": " + c.why()};
    if (c.change == Change::regressed || c.change == Change::removed)
      t.failure = fmt::format("{} {}: {}", c.cell(), change_name(c.change), c.why());
    suite.cases.push_back(std::move(t));
  }
  return suite;
}

}  // namespace tb::verdicts
