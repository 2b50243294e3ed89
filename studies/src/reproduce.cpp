#include "twinbench/studies/reproduce.hpp"

#include "twinbench/studies/gnuplot.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "twinbench/studies/embedded.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/runner/progress.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/text.hpp"
#include "twinbench/verdicts/criterion.hpp"

namespace tb::studies {

namespace {

const embedded::EmbeddedFile* published_scenario_file(const std::string& name) {
  if (name == "latency") return &embedded::published_latency;
  if (name == "small_download") return &embedded::published_small_download;
  if (name == "file_download") return &embedded::published_file_download;
  return nullptr;
}

std::string size_label(std::uint64_t bytes) {
  if (bytes == 0) return "ping";
  if (bytes % (1024 * 1024) == 0) return fmt::format("{} MB", bytes >> 20);
  if (bytes % 1024 == 0) return fmt::format("{} KB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string fps_label(std::uint32_t fps) { return fps ? fmt::format("{} fps", fps) : "uncapped"; }

}  // namespace

std::vector<MeasuredCell> published_cells() {
  auto medians = scenario::parse_measured_csv(embedded::reference_medians.text,
                                              embedded::reference_medians.path);
  scenario::attach_summaries(medians,
                             scenario::parse_measured_csv(embedded::reference_summary.text,
                                                          embedded::reference_summary.path));
  return medians;
}

twinbench::Scenario load_profile(const std::string& name_or_path) {
  if (name_or_path == "lightsail-2026") {
    return scenario::parse_profile(embedded::profile_lightsail_2026.text,
                                   embedded::profile_lightsail_2026.path);
  }
  const auto text = scenario::read_file(name_or_path);
  if (!text) {
    throw scenario::ScenarioError(
        fmt::format("--profile {}: expected a built-in profile (lightsail-2026) or a "
                    "readable textproto file ({})",
                    name_or_path, errno ? std::strerror(errno) : "cannot read"));
  }
  return scenario::parse_profile(*text, name_or_path);
}

bool CellComparison::within_one_frame() const {
  return verdicts::within(error_ms(), measured.median_ms, frame_ms, {.frames = 1, .percent = 0});
}

bool CellComparison::within_goal() const {
  return verdicts::within(error_ms(), measured.median_ms, frame_ms);
}

std::optional<bool> CellComparison::within_measured_iqr() const {
  if (!measured.summary) return std::nullopt;
  constexpr double kRounding = 0.1;  // ms: the reference files' precision
  return measured.summary->q1 - kRounding <= simulated.median &&
         simulated.median <= measured.summary->q3 + kRounding;
}

double Comparison::median_abs_pct() const {
  std::vector<double> v;
  for (const auto& c : cells) v.push_back(std::abs(c.error_pct()));
  return v.empty() ? 0 : scenario::summarize(v).median;
}

double Comparison::max_abs_pct() const {
  double m = 0;
  for (const auto& c : cells) m = std::max(m, std::abs(c.error_pct()));
  return m;
}

std::size_t Comparison::within_one_frame() const {
  return static_cast<std::size_t>(std::count_if(
      cells.begin(), cells.end(), [](const auto& c) { return c.within_one_frame(); }));
}

std::size_t Comparison::with_summary() const {
  return static_cast<std::size_t>(std::count_if(
      cells.begin(), cells.end(), [](const auto& c) { return c.measured.summary.has_value(); }));
}

std::size_t Comparison::within_measured_iqr() const {
  return static_cast<std::size_t>(std::count_if(cells.begin(), cells.end(), [](const auto& c) {
    return c.within_measured_iqr().value_or(false);
  }));
}

std::size_t Comparison::within_goal() const {
  return static_cast<std::size_t>(
      std::count_if(cells.begin(), cells.end(), [](const auto& c) { return c.within_goal(); }));
}

namespace {

// The measured cells by published scenario, in the order the scenarios first appear; each cell's
// scenario and variant checked against the published ones before anything is simulated.
std::vector<std::pair<std::string, std::vector<const MeasuredCell*>>> group_by_scenario(
    const std::vector<MeasuredCell>& measured) {
  std::vector<std::pair<std::string, std::vector<const MeasuredCell*>>> groups;
  for (const auto& c : measured) {
    const auto* file = published_scenario_file(c.scenario);
    if (!file) {
      throw InputError(
          fmt::format("{}: scenario: expected latency, small_download or file_download, got '{}'",
                      c.origin, scenario::printable(c.scenario)));
    }
    const auto published = scenario::parse_scenario(file->text, file->path);
    const bool known = std::any_of(published.variants().begin(), published.variants().end(),
                                   [&](const auto& v) { return v.name() == c.variant; });
    if (!known) {
      throw InputError(fmt::format("{}: variant: '{}' is not a variant of {}", c.origin,
                                   scenario::printable(c.variant), c.scenario));
    }
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const auto& g) { return g.first == c.scenario; });
    if (group == groups.end()) group = groups.insert(groups.end(), {c.scenario, {}});
    group->second.push_back(&c);
  }
  return groups;
}

// The published scenario `name` restricted to `cells` (its variants in the published interleave
// order, the cells' caps and sizes in their order), under `profile`, validated.
twinbench::Scenario scenario_of_cells(const std::string& name,
                                      const std::vector<const MeasuredCell*>& cells,
                                      const twinbench::Scenario& profile,
                                      const CompareOptions& options) {
  const auto* file = published_scenario_file(name);
  const auto published = scenario::parse_scenario(file->text, file->path);
  twinbench::Scenario s = scenario::scenario_under_profile(file->text, file->path, profile);
  s.clear_variants();
  s.clear_frame_caps();
  s.clear_body_bytes();
  for (const auto& v : published.variants()) {
    if (std::any_of(cells.begin(), cells.end(),
                    [&](const MeasuredCell* c) { return c->variant == v.name(); }))
      *s.add_variants() = v;
  }
  std::vector<std::uint32_t> caps;
  std::vector<std::uint64_t> sizes;
  for (const MeasuredCell* c : cells) {
    if (std::find(caps.begin(), caps.end(), c->fps) == caps.end()) caps.push_back(c->fps);
    if (std::find(sizes.begin(), sizes.end(), c->body_bytes) == sizes.end())
      sizes.push_back(c->body_bytes);
  }
  for (auto cap : caps) s.add_frame_caps(cap);
  for (auto size : sizes) s.add_body_bytes(size);
  if (options.runs) s.set_runs(options.runs);
  if (options.warmups) s.set_warmups(*options.warmups);
  scenario::apply_defaults(s);
  scenario::validate_scenario(s, name + " under profile " + profile.name());
  sim::require_simulatable(s, name + " under profile " + profile.name());
  return s;
}

// Every scenario simulated in one pool of processes; the cells by key.
std::map<std::string, scenario::Cell> simulate_cells(std::vector<twinbench::Scenario> scenarios,
                                                     const CompareOptions& options) {
  std::vector<sim::SimulationRequest> requests;
  // One progress line over every scenario's samples.
  auto line = std::make_shared<runner::ProgressLine>("samples", options.progress);
  auto done = std::make_shared<std::size_t>(0);
  auto total = std::make_shared<std::size_t>(0);
  for (auto& s : scenarios) {
    runner::RunOptions run_options;
    if (options.progress) {
      *total += runner::protocol_steps(s).size();
      run_options.on_sample = [line, done, total](const twinbench::Sample& sample, std::size_t,
                                                  std::size_t) {
        line->update(++*done, *total, sample.scenario());
      };
    }
    requests.push_back(sim::SimulationRequest{std::move(s), std::move(run_options), {}});
  }
  std::map<std::string, scenario::Cell> simulated;
  for (const auto& results : sim::run_simulated_together(requests, options.jobs)) {
    for (auto& cell : scenario::collect_cells(results)) {
      simulated[scenario::cell_key(cell.scenario, cell.fps, cell.body_bytes, cell.variant)] =
          std::move(cell);
    }
  }
  return simulated;
}

}  // namespace

Comparison simulate_and_compare(const std::vector<MeasuredCell>& measured,
                                const twinbench::Scenario& profile, const CompareOptions& options) {
  // Every scenario is built and checked first, then all are simulated together.
  std::vector<twinbench::Scenario> scenarios;
  for (const auto& [name, cells] : group_by_scenario(measured))
    scenarios.push_back(scenario_of_cells(name, cells, profile, options));
  const auto simulated = simulate_cells(std::move(scenarios), options);
  Comparison result;
  result.profile = profile.name();
  result.profile_description = profile.description();
  for (const auto& m : measured) {
    const auto& cell = simulated.at(scenario::cell_key(m.scenario, m.fps, m.body_bytes, m.variant));
    if (cell.elapsed_ms.empty()) {
      throw std::runtime_error(
          fmt::format("{}: the simulation of this cell failed: {}", m.origin, cell.first_error));
    }
    CellComparison c;
    c.measured = m;
    c.simulated = scenario::summarize(cell.elapsed_ms);
    c.simulated_frames = scenario::summarize(cell.frames).median;
    c.frame_ms = m.fps ? 1000.0 / m.fps : std::max(profile.frame_loop().frame_work_ms(), 1e-3);
    result.cells.push_back(std::move(c));
  }
  return result;
}

std::string comparison_markdown(const Comparison& c, const std::string& title) {
  std::string out =
      fmt::format("# {}\n\nProfile `{}`: {}.\n\n", title, c.profile, c.profile_description);
  out += fmt::format(
      "**{} cells: {} within one frame of their cap, {} within max(1 frame, 5 %); median |error| "
      "{:.1f} %, "
      "max {:.1f} %.**\n\n",
      c.cells.size(), c.within_one_frame(), c.within_goal(), c.median_abs_pct(), c.max_abs_pct());
  if (c.with_summary() > 0) {
    out += fmt::format(
        "**{} of the {} cells with a {} five-number summary have their simulated median within the "
        "{} "
        "interquartile range.**\n\n",
        c.within_measured_iqr(), c.with_summary(), c.reference, c.reference);
  }
  out += fmt::format(
      "Errors are simulated minus {} median; one frame is 1/fps (the frame work time when "
      "uncapped). "
      "✗: outside max(1 frame, 5 %); in IQR: the simulated median within the {} q1..q3.\n",
      c.reference, c.reference);
  std::string current;
  for (const auto& cell : c.cells) {
    const auto& m = cell.measured;
    if (m.scenario != current) {
      current = m.scenario;
      out += fmt::format(
          "\n## {}\n\n| cell | variant | {} | simulated | error ms | error % | error frames | sim "
          "frames "
          "| in IQR |\n|---|---|---:|---:|---:|---:|---:|---:|:---:|\n",
          current, c.reference);
    }
    const auto in_iqr = cell.within_measured_iqr();
    out += fmt::format(
        "| {}, {} | {} | {:.1f} | {:.1f} | {:+.1f} | {:+.1f} | {:+.1f}{} | {:.0f} | {} |\n",
        fps_label(m.fps), size_label(m.body_bytes), m.variant, m.median_ms, cell.simulated.median,
        cell.error_ms(), cell.error_pct(), cell.error_frames(), cell.within_goal() ? "" : " ✗",
        cell.simulated_frames, in_iqr ? (*in_iqr ? "✓" : "✗") : "–");
  }
  out += fmt::format("\n## Five-number summaries, {} / simulated (ms)\n\n", c.reference);
  out +=
      "| scenario | cell | variant | min | q1 | median | q3 | max "
      "|\n|---|---|---|---:|---:|---:|---:|---:|\n";
  for (const auto& cell : c.cells) {
    const auto& m = cell.measured;
    const auto& s = cell.simulated;
    auto pair = [](std::optional<double> published, double simulated) {
      return published ? fmt::format("{:.1f} / {:.1f}", *published, simulated)
                       : fmt::format("– / {:.1f}", simulated);
    };
    const auto& p = m.summary;
    out += fmt::format(
        "| {} | {}, {} | {} | {} | {} | {} | {} | {} |\n", m.scenario, fps_label(m.fps),
        size_label(m.body_bytes), m.variant, pair(p ? std::optional(p->min) : std::nullopt, s.min),
        pair(p ? std::optional(p->q1) : std::nullopt, s.q1), pair(m.median_ms, s.median),
        pair(p ? std::optional(p->q3) : std::nullopt, s.q3),
        pair(p ? std::optional(p->max) : std::nullopt, s.max));
  }
  return out;
}

std::string comparison_csv(const Comparison& c) {
  std::string out =
      fmt::format("scenario,fps,body_bytes,variant,median_ms,{}_ms,simulated_ms\n", c.reference);
  for (const auto& cell : c.cells) {
    const auto& m = cell.measured;
    out += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f}\n", m.scenario, m.fps, m.body_bytes,
                       m.variant, m.median_ms, m.median_ms, cell.simulated.median);
  }
  return out;
}

namespace {

// Published against simulated medians, one point per cell with its two interquartile ranges as
// error bars (the measured one when known), on log axes with the y = x line and a +-5 % band.
// gnuplot renders it; without gnuplot the plot is skipped with a message.
void write_plot(const Comparison& c, const std::filesystem::path& dir, const std::string& title) {
  std::string data;
  for (const auto& cell : c.cells) {
    const auto& m = cell.measured;
    const auto& s = cell.simulated;
    data += fmt::format("{:.3f} {:.3f} {} {:.3f} {:.3f} {:.3f} {:.3f}\n", m.median_ms, s.median,
                        m.scenario, m.summary ? m.summary->q1 : m.median_ms,
                        m.summary ? m.summary->q3 : m.median_ms, s.q1, s.q3);
  }
  render_plot(
      dir, "reproduction", data,
      [&](const std::string& terminal, const std::string& output, const std::string& data_file) {
        return fmt::format(
            "set terminal {}\nset output {}\nset title {} noenhanced\nset logscale xy\nset grid\n"
            "set xlabel '{} median (ms), bars q1..q3'\nset ylabel 'simulated median (ms), bars "
            "q1..q3'\nset key top left\n"
            "set xrange [20:20000]\nset yrange [20:20000]\n"
            "plot x title 'simulated = {}' lc rgb 'black', 1.05*x title '+5 %' dt 2 lc rgb 'gray', "
            "0.95*x title '-5 %' dt 2 lc rgb 'gray', "
            "{} using 1:(strcol(3) eq 'latency' ? $2 : 1/0):4:5:6:7 with xyerrorbars title "
            "'latency' pt 7 ps 1.2, "
            "{} using 1:(strcol(3) eq 'small_download' ? $2 : 1/0):4:5:6:7 with xyerrorbars title "
            "'small download' pt 5 ps 1.2, "
            "{} using 1:(strcol(3) eq 'file_download' ? $2 : 1/0):4:5:6:7 with xyerrorbars title "
            "'file download' pt 9 ps 1.4\n",
            terminal, output, gnuplot_quoted(title), c.reference, c.reference, data_file, data_file,
            data_file);
      });
}

}  // namespace

void write_comparison(const Comparison& c, const std::string& dir, const std::string& title) {
  scenario::write_file_atomically(std::filesystem::path(dir) / "reproduction.csv",
                                  comparison_csv(c));
  scenario::write_file_atomically(std::filesystem::path(dir) / "reproduction.md",
                                  comparison_markdown(c, title));
  write_plot(c, dir, title);
}

verdicts::JUnitSuite comparison_junit(const Comparison& comparison, const std::string& suite_name) {
  verdicts::JUnitSuite suite{suite_name, {}};
  for (const CellComparison& c : comparison.cells) {
    const auto& m = c.measured;
    const std::string numbers = fmt::format(
        "simulated median {:.1f} ms, {} {:.1f} ms: {:+.1f} ms ({:+.1f} %, {:+.2f} frames); allowed "
        "max(1 frame, 5 %)",
        c.simulated.median, comparison.reference, m.median_ms, c.error_ms(), c.error_pct(),
        c.error_frames());
    verdicts::JUnitCase t{"twinbench.validate." + m.scenario,
                          scenario::cell_label(m.variant, m.fps, m.body_bytes),
                          std::nullopt, numbers};
    if (!c.within_goal()) t.failure = t.name + ": " + numbers;
    suite.cases.push_back(std::move(t));
  }
  return suite;
}

}  // namespace tb::studies
