#include "twinbench/verdicts/expectations.hpp"

#include <algorithm>
#include <set>
#include <fmt/format.h>

#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/stats.hpp"

namespace tb::verdicts {
namespace {

using Expectation = twinbench::Expectation;

template <class List, class T>
bool selects(const List& listed, const T& value) {
  return listed.empty() || std::find(listed.begin(), listed.end(), value) != listed.end();
}

// The statistic's name and value over a cell's successful samples (in round order).
std::string statistic_name(const Expectation& e) {
  switch (e.statistic()) {
    case Expectation::QUANTILE: return fmt::format("p{:g}", 100 * e.quantile());
    case Expectation::MAX: return "max";
    default: return "median";
  }
}

double statistic_of(const Expectation& e, std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const double q = e.statistic() == Expectation::QUANTILE ? e.quantile()
                   : e.statistic() == Expectation::MAX    ? 1.0
                                                          : 0.5;
  return scenario::quantile_sorted(values, q);
}

std::string number(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

bool ExpectationCheck::held() const {
  if (failures > 0 && !failures_allowed) return false;
  return value && *value <= bound + 1e-9;
}

std::string ExpectationCheck::cell() const {
  return scenario::cell_label(variant, fps, body_bytes);
}

std::string ExpectationCheck::requirement() const {
  return fmt::format("{} <= {:g} {}", statistic, bound, unit);
}

std::string ExpectationCheck::outcome() const {
  std::string text = value ? fmt::format("{} {} {}", statistic, number(*value), unit)
                           : std::string("no request succeeded");
  if (failures > 0)
    text += fmt::format("; {} of {} requests failed ({}){}", failures, requests, first_error,
                        failures_allowed ? ", allowed" : "");
  return text;
}

std::vector<ExpectationCheck> check_expectations(const twinbench::ResultSet& results) {
  const auto& sc = results.scenario();
  std::vector<ExpectationCheck> checks;
  if (sc.expect().empty()) return checks;
  const std::vector<scenario::Cell> cells = scenario::collect_cells(results);
  for (int i = 0; i < sc.expect_size(); ++i) {
    const Expectation& e = sc.expect(i);
    for (const scenario::Cell& c : cells) {
      if (!selects(e.variants(), c.variant) || !selects(e.frame_caps(), c.fps) ||
          !selects(e.body_bytes(), c.body_bytes))
        continue;
      ExpectationCheck check;
      check.index = i;
      check.scenario = c.scenario;
      check.variant = c.variant;
      check.fps = c.fps;
      check.body_bytes = c.body_bytes;
      check.statistic = statistic_name(e);
      check.requests = c.elapsed_ms.size() + c.failures;
      check.failures = c.failures;
      check.failures_allowed = e.allow_failures();
      check.first_error = c.first_error;
      const auto bound = [&](const char* unit, double limit, const std::vector<double>& values) {
        ExpectationCheck b = check;
        b.unit = unit;
        b.bound = limit;
        if (!values.empty()) b.value = statistic_of(e, values);
        checks.push_back(std::move(b));
      };
      if (e.has_max_ms()) bound("ms", e.max_ms(), c.elapsed_ms);
      if (e.has_max_frames()) bound("frames", e.max_frames(), c.frames);
    }
  }
  return checks;
}

std::size_t breached(const std::vector<ExpectationCheck>& checks) {
  return static_cast<std::size_t>(
      std::count_if(checks.begin(), checks.end(), [](const auto& c) { return !c.held(); }));
}

std::string expectations_summary(const std::vector<ExpectationCheck>& checks) {
  std::set<int> expectations, failing;
  for (const auto& c : checks) {
    expectations.insert(c.index);
    if (!c.held()) failing.insert(c.index);
  }
  if (failing.empty())
    return fmt::format("all {} expectations held ({} checks over their cells)",
                       expectations.size(), checks.size());
  std::string which;
  for (const int i : failing) which += fmt::format("{}expect[{}]", which.empty() ? "" : ", ", i);
  return fmt::format("{} of {} expectation checks breached ({})", breached(checks), checks.size(),
                     which);
}

std::string expectations_markdown(const std::vector<ExpectationCheck>& checks) {
  if (checks.empty()) return {};
  std::string out = fmt::format(
      "## Expectations\n\n{}.\n\n| Expectation | Cell | Bound | Measured | Verdict |\n"
      "|---|---|---|---|---|\n",
      expectations_summary(checks));
  for (const auto& c : checks)
    out += fmt::format("| expect[{}] | {} | {} | {} | {} |\n", c.index, scenario::md_cell(c.cell()),
                       c.requirement(), scenario::md_cell(c.outcome()),
                       c.held() ? "held" : "**breached**");
  return out;
}

JUnitSuite expectations_junit(const std::vector<ExpectationCheck>& checks,
                              const std::string& scenario_name) {
  JUnitSuite suite{"expectations of " + scenario_name, {}};
  for (const auto& c : checks) {
    JUnitCase t{fmt::format("twinbench.run.{}.expect[{}]", c.scenario, c.index),
                fmt::format("{}: {}", c.cell(), c.requirement()), std::nullopt, c.outcome()};
    if (!c.held())
      t.failure = fmt::format("expect[{}] {}: {} required, {}", c.index, c.cell(),
                              c.requirement(), c.outcome());
    suite.cases.push_back(std::move(t));
  }
  return suite;
}

}  // namespace tb::verdicts
