#include "twinbench/studies/twin_compare.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>

#include "twinbench/emulated/emulated_run.hpp"
#include "twinbench/studies/gnuplot.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/studies/sweep.hpp"
#include "twinbench/parallel/stop_signals.hpp"
#include "twinbench/runner/progress.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/verdicts/criterion.hpp"

namespace tb::studies {
namespace {

std::string ms(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

bool TwinCell::within_time() const {
  if (!missing.empty()) return false;
  return verdicts::within(diff_ms(), emulated.median, frame_ms);
}

std::optional<bool> TwinCell::within_frames() const {
  if (fps == 0) return std::nullopt;
  return missing.empty() && std::fabs(simulated_frames - emulated_frames) <= 1;
}

CompareCounts count_within(const std::vector<TwinCell>& cells) {
  CompareCounts n;
  n.cells = cells.size();
  for (const auto& c : cells) {
    n.within_time += c.within_time() ? 1 : 0;
    if (const auto frames = c.within_frames()) {
      ++n.capped;
      n.within_frames += *frames ? 1 : 0;
    }
  }
  return n;
}

std::string CompareCounts::summary() const {
  const auto pct = [](std::size_t part, std::size_t whole) {
    return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  };
  return fmt::format(
      "{} of {} cells ({:.0f} %) within max(1 frame, 5 %) in time; {} of {} capped cells ({:.0f} "
      "%) within one frame in frame counts",
      within_time, cells, pct(within_time, cells), within_frames, capped,
      pct(within_frames, capped));
}

std::vector<TwinCell> pair_cells(const std::string& point, const twinbench::ResultSet& simulated,
                                 const twinbench::ResultSet& emulated) {
  if (simulated.scenario().name() != emulated.scenario().name())
    throw std::runtime_error("compare: the two runs are of different scenarios");
  std::map<std::string, scenario::Cell> emu;
  for (auto& c : scenario::collect_cells(emulated))
    emu[scenario::cell_key(c.scenario, c.fps, c.body_bytes, c.variant)] = std::move(c);
  std::vector<TwinCell> cells;
  for (const auto& s : scenario::collect_cells(simulated)) {  // the scenario's order
    const auto e = emu.find(scenario::cell_key(s.scenario, s.fps, s.body_bytes, s.variant));
    TwinCell c;
    c.point = point;
    c.scenario = s.scenario;
    c.variant = s.variant;
    c.fps = s.fps;
    c.body_bytes = s.body_bytes;
    c.path_valid = emulated.run().emulated().valid();
    if (s.elapsed_ms.empty() || e == emu.end() || e->second.elapsed_ms.empty()) {
      c.missing = s.elapsed_ms.empty() ? "simulated: " + s.first_error
                  : e == emu.end()     ? std::string("emulated: not run")
                                       : "emulated: " + e->second.first_error;
      cells.push_back(c);
      continue;
    }
    c.simulated = scenario::summarize(s.elapsed_ms);
    c.emulated = scenario::summarize(e->second.elapsed_ms);
    c.frame_ms = verdicts::frame_ms(simulated.scenario(), s.fps);
    c.simulated_frames = scenario::summarize(s.frames).median;
    c.emulated_frames = scenario::summarize(e->second.frames).median;
    c.path_valid = emulated.run().emulated().valid();
    c.lateness_p99_us = emulated.run().emulated().lateness_p99_us();
    cells.push_back(c);
  }
  return cells;
}

std::string twin_csv(const std::vector<TwinCell>& cells) {
  std::string out =
      "point,scenario,fps,body_bytes,variant,sim_median_ms,sim_q1_ms,sim_q3_ms,emu_median_ms,emu_"
      "q1_ms,emu_q3_ms,"
      "diff_ms,diff_pct,diff_frames,within_frames,within_time,emu_path_valid,emu_lateness_p99_"
      "us,sim_runs,emu_runs\n";
  for (const auto& c : cells) {
    const auto frames = c.within_frames();
    const std::string within_frames = !frames ? "" : *frames ? "yes" : "no";
    if (!c.missing.empty()) {
      out += fmt::format("\"{}\",{},{},{},{},,,,,,,,,,{},no,{},,0,0\n", c.point, c.scenario, c.fps,
                         c.body_bytes, c.variant, within_frames, c.path_valid ? "yes" : "no");
      continue;
    }
    out += fmt::format(
        "\"{}\",{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{:.2f},{:.2f},{},{},{},"
        "{:.0f},{},{}\n",
        c.point, c.scenario, c.fps, c.body_bytes, c.variant, c.simulated.median, c.simulated.q1,
        c.simulated.q3, c.emulated.median, c.emulated.q1, c.emulated.q3, c.diff_ms(),
        c.diff_percent(), c.diff_frames(), within_frames, c.within_time() ? "yes" : "no",
        c.path_valid ? "yes" : "no",
        c.lateness_p99_us, c.simulated.n, c.emulated.n);
  }
  return out;
}

std::string twin_markdown(const std::vector<TwinCell>& cells, const std::string& title,
                          const std::vector<std::string>& notes) {
  const auto invalid =
      std::count_if(cells.begin(), cells.end(), [](const TwinCell& c) { return !c.path_valid; });
  std::string out = fmt::format("# {}\n\n", title);
  out += fmt::format("**{}**", count_within(cells).summary());
  out +=
      invalid
          ? fmt::format("; {} cells from runs whose path timing was invalid (marked).\n\n", invalid)
          : "; no run was marked invalid for its timing (docs/emulated-path.md, Validity).\n\n";
  out +=
      "Simulated (ns-3) and emulated (real kernel TCP) medians, q1..q3 in brackets, in ms; the "
      "difference is "
      "simulated minus emulated. *frames*: the median frame counts at most one apart (capped "
      "cells; - uncapped); *time*: the medians within max(1 frame, 5 % of the emulated one).\n\n";
  out +=
      "| point | variant | fps | bytes | simulated | emulated | diff ms | diff % | diff frames | "
      "frames | time |\n"
      "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|\n";
  const auto verdict = [](std::optional<bool> v) -> std::string {
    return !v ? "-" : *v ? "yes" : "**no**";
  };
  for (const auto& c : cells) {
    if (!c.missing.empty()) {
      out += fmt::format(
          "| {} | {} | {} | {} | | | | | | {} | **no**: no successful sample ({}) |\n",
          c.point.empty() ? "-" : c.point, c.variant, c.fps, c.body_bytes,
          verdict(c.within_frames()), c.missing);
      continue;
    }
    out += fmt::format(
        "| {} | {} | {} | {} | {} ({}..{}) | {} ({}..{}){} | {:+.1f} | {:+.1f} | {:+.2f} | {} | {} "
        "|\n",
        c.point.empty() ? "-" : c.point, c.variant, c.fps, c.body_bytes, ms(c.simulated.median),
        ms(c.simulated.q1), ms(c.simulated.q3), ms(c.emulated.median), ms(c.emulated.q1),
        ms(c.emulated.q3), c.path_valid ? "" : " (invalid timing)", c.diff_ms(), c.diff_percent(),
        c.diff_frames(), verdict(c.within_frames()), verdict(c.within_time()));
  }
  if (!notes.empty()) {
    out += "\n";
    for (const auto& n : notes) out += n + "\n";
  }
  return out;
}

namespace {

void write_twin_plot(const std::vector<TwinCell>& cells, const std::filesystem::path& dir,
                     const std::string& title) {
  std::string data;
  for (const auto& c : cells) {
    if (!c.missing.empty()) continue;
    data += fmt::format("{:.3f} {:.3f} {:.3f} {:.3f} {:.3f} {:.3f} {}\n", c.emulated.median,
                        c.simulated.median, c.emulated.q1, c.emulated.q3, c.simulated.q1,
                        c.simulated.q3, c.fps);
  }
  render_plot(
      dir, "compare", data,
      [&](const std::string& terminal, const std::string& output, const std::string& data_file) {
        return fmt::format(
            "set terminal {}\nset output {}\nset title {} noenhanced\nset logscale xy\nset grid\n"
            "set xlabel 'emulated median (ms), real kernel TCP; bars q1..q3'\n"
            "set ylabel 'simulated median (ms), ns-3; bars q1..q3'\nset key top left\n"
            "plot x title 'simulated = emulated' lc rgb 'black', 1.05*x title '+5 %' dt 2 lc rgb "
            "'gray', "
            "0.95*x title '-5 %' dt 2 lc rgb 'gray', "
            "{} using 1:($7 == 0 ? $2 : 1/0):3:4:5:6 with xyerrorbars title 'uncapped' pt 7 ps "
            "1.0, "
            "{} using 1:($7 > 0 ? $2 : 1/0):3:4:5:6 with xyerrorbars title 'capped' pt 5 ps 1.0\n",
            terminal, output, gnuplot_quoted(title), data_file, data_file);
      });
}

struct GridPoint {
  std::string key;
  twinbench::Scenario scenario;
};

std::vector<GridPoint> grid_of(const twinbench::Scenario& base,
                               const std::vector<std::string>& specs) {
  if (specs.empty()) return {{"", base}};
  std::vector<Axis> axes;
  for (const auto& spec : specs) axes.push_back(parse_axis(spec, base));
  std::vector<GridPoint> points;
  for (const auto& p : enumerate_points(axes))
    points.push_back({p.key, apply_point(base, axes, p)});
  return points;
}

// What the emulated path did not take from the scenario, once per distinct line.
void collect_notes(const twinbench::ResultSet& emulated, std::set<std::string>& seen,
                   std::vector<std::string>& notes) {
  for (const auto& s : emulated.run().emulated().settings()) {
    if (s.applied()) continue;
    const std::string line =
        fmt::format("- {} `{}` = {}: {}", s.side(), s.field(), s.value(), s.how());
    if (seen.insert(line).second) notes.push_back(line);
  }
}

}  // namespace

namespace {

struct CompareInput {
  twinbench::Scenario base;
  std::vector<GridPoint> points;
};

// The scenario with --runs/--warmups, and the grid's points, each validated (bad input throws).
CompareInput load_input(const TwinCompareOptions& a) {
  CompareInput in;
  in.base = scenario::load_scenario(a.scenario);
  if (a.runs) in.base.set_runs(*a.runs);
  if (a.warmups) in.base.set_warmups(*a.warmups);
  sim::require_simulatable(in.base, a.scenario);
  in.points = grid_of(in.base, a.axes);
  for (const auto& p : in.points) {
    const std::string origin = a.scenario + (p.key.empty() ? "" : " at " + p.key);
    scenario::validate_scenario(p.scenario, origin);
    sim::require_simulatable(p.scenario, origin);
  }
  return in;
}

struct CompareOutcome {
  std::vector<TwinCell> cells;
  std::set<std::string> seen_notes;
  std::vector<std::string> not_applied;  // settings the emulated path did not take
  std::vector<std::string> invalid;      // runs whose path timing was invalid
};

std::string point_text(const GridPoint& p, const std::string& name,
                       const std::vector<TwinCell>& point_cells, const twinbench::RunInfo& run) {
  const auto ok = std::count_if(point_cells.begin(), point_cells.end(),
                                [](const TwinCell& c) { return c.within_time(); });
  const auto& path = run.emulated();
  const auto& host = run.host_timing();
  // Runs recorded before 2026-12-07 have no wake-ups recorded.
  const std::string wakeups = host.wakeups() > 0
                                  ? fmt::format("client wake-ups p99 {:.0f} us", host.p99_us())
                                  : std::string("client wake-ups not recorded");
  return fmt::format("{}: {}/{} cells within in time; packet lateness p99 {:.0f} us, {}{}",
                     p.key.empty() ? name : p.key, ok, point_cells.size(), path.lateness_p99_us(),
                     wakeups, path.valid() ? "" : " (INVALID)");
}

std::filesystem::path point_dir(const GridPoint& p) {
  return std::filesystem::path("points") / (p.key.empty() ? std::string("all") : p.key);
}

// The emulated run of point p that an earlier compare recorded under `from`. It must be an
// emulated run of this point's scenario (same axes, runs, warmups) with this seed, or the pairing
// would judge other cells or other draws of the link.
twinbench::ResultSet recorded_emulated_run(const std::string& from, const GridPoint& p,
                                           std::uint64_t seed) {
  const auto file = std::filesystem::path(from) / point_dir(p) / "emulated" / "results.json";
  twinbench::ResultSet recorded = scenario::read_results_json(file);
  const std::string point = p.key.empty() ? "the scenario" : p.key;
  if (recorded.run().backend() != "emulated")
    throw InputError(fmt::format("{}: run.backend: expected \"emulated\", got \"{}\"",
                                 file.string(), recorded.run().backend()));
  if (recorded.run().seed() != seed)
    throw InputError(fmt::format("{}: run.seed: expected {} (this compare's --seed), got {}",
                                 file.string(), seed, recorded.run().seed()));
  google::protobuf::util::MessageDifferencer differencer;
  std::string differences;
  differencer.ReportDifferencesToString(&differences);
  if (!differencer.Compare(p.scenario, recorded.scenario())) {
    differences = differences.substr(0, differences.find('\n'));
    throw InputError(fmt::format(
        "{}: scenario: expected the emulated run of {} as this compare would run it (same "
        "scenario, axes, runs and warmups); first difference (this compare's, then the "
        "recording's): {}",
        file.string(), point, differences));
  }
  return recorded;
}

// Every recording, loaded and checked before the simulation runs (an hour for a big grid).
std::vector<twinbench::ResultSet> recorded_emulated_runs(const TwinCompareOptions& a,
                                                         const CompareInput& in) {
  std::vector<twinbench::ResultSet> runs;
  for (const auto& p : in.points) runs.push_back(recorded_emulated_run(a.emulated_from, p, a.seed));
  return runs;
}

// Every point simulated (in parallel, first), then run on the emulated path (one at a time:
// real time needs the machine), paired cell by cell; each point's results kept under points/.
CompareOutcome run_both_twins(const TwinCompareOptions& a, const CompareInput& in,
                              const std::vector<twinbench::ResultSet>& recorded,
                              const std::filesystem::path& out) {
  runner::RunOptions options;
  options.seed = a.seed;
  options.stop_requested = [] { return parallel::stop_signal() != 0; };  // under StopOnSignals
  if (!a.quiet)
    std::cerr << fmt::format("simulating {} point(s) ({} jobs)...\n", in.points.size(), a.jobs);
  std::vector<sim::SimulationRequest> requests;
  for (const auto& p : in.points) requests.push_back({p.scenario, options, {}, false});
  const auto simulated = sim::run_simulated_together(requests, a.jobs);
  CompareOutcome o;
  runner::ProgressLine progress("points on the emulated path", !a.quiet);
  progress.update(0, in.points.size());  // the simulation is done; the emulated runs take long
  for (std::size_t i = 0; i < in.points.size(); ++i) {
    const auto& p = in.points[i];
    const auto emulated_run =
        recorded.empty() ? emulated::run_emulated(p.scenario, options) : recorded[i];
    const auto point_cells = pair_cells(p.key, simulated[i], emulated_run);
    o.cells.insert(o.cells.end(), point_cells.begin(), point_cells.end());
    collect_notes(emulated_run, o.seen_notes, o.not_applied);
    const auto& path = emulated_run.run().emulated();
    if (!path.valid())
      o.invalid.push_back(
          fmt::format("- {}: {}", p.key.empty() ? "the run" : p.key, path.invalid_reason()));
    const auto dir = out / point_dir(p);
    scenario::write_results(simulated[i], dir / "sim");
    scenario::write_results(emulated_run, dir / "emulated");
    progress.update(i + 1, in.points.size(),
                    point_text(p, in.base.name(), point_cells, emulated_run.run()));
  }
  return o;
}

void write_compare(const TwinCompareOptions& a, const CompareInput& in, const CompareOutcome& o,
                   const std::filesystem::path& out) {
  std::vector<std::string> notes;
  if (!o.not_applied.empty()) {
    notes.push_back("Scenario settings the emulated path did not apply:\n");
    notes.insert(notes.end(), o.not_applied.begin(), o.not_applied.end());
  }
  if (!o.invalid.empty()) {
    notes.push_back("\nRuns whose path timing was invalid:\n");
    notes.insert(notes.end(), o.invalid.begin(), o.invalid.end());
  }
  notes.push_back(fmt::format(
      "\nSeed {}; {} measured and {} warmup rounds per cell; per-point results in points/.", a.seed,
      in.base.runs(), in.base.warmups()));
  if (!a.emulated_from.empty())
    notes.push_back(fmt::format(
        "The emulated path was not run: its results are the recorded ones of {} (--emulated-from).",
        a.emulated_from));
  const std::string title = fmt::format("{}: simulation against the emulated path", in.base.name());
  const std::string md = twin_markdown(o.cells, title, notes);
  scenario::write_file_atomically(out / "compare.csv", twin_csv(o.cells));
  scenario::write_file_atomically(out / "compare.md", md);
  write_twin_plot(o.cells, out, title);
  if (!a.junit.empty()) verdicts::write_junit(a.junit, {twin_junit(o.cells, title)});
  std::cout << md;
  if (!a.quiet) std::cerr << "wrote " << out.string() << "/compare.{csv,md,png,svg}\n";
}

}  // namespace

void run_twin_compare(const TwinCompareOptions& a) {
  const CompareInput in = load_input(a);
  // The path's prerequisites, or the recorded runs that stand in for it, before an hour of
  // simulation.
  std::vector<twinbench::ResultSet> recorded;
  if (!a.emulated_from.empty())
    recorded = recorded_emulated_runs(a, in);
  else if (const auto missing = emulated::run_emulated_preflight(in.base))
    throw emulated::PathUnavailable(*missing);
  const std::filesystem::path out = a.out.empty() ? "out/" + in.base.name() + "-compare" : a.out;
  write_compare(a, in, run_both_twins(a, in, recorded, out), out);
}

verdicts::JUnitSuite twin_junit(const std::vector<TwinCell>& cells, const std::string& suite_name) {
  verdicts::JUnitSuite suite{suite_name, {}};
  for (const TwinCell& c : cells) {
    const std::string where = c.point.empty() ? c.scenario : c.point;
    const auto frames = c.within_frames();
    const std::string numbers =
        !c.missing.empty()
            ? "no successful request in one twin: " + c.missing
            : fmt::format(
                  "simulated median {:.1f} ms, emulated {:.1f} ms: {:+.1f} ms ({:+.1f} %, {:+.2f} "
                  "frames); allowed max(1 frame, 5 %){}",
                  c.simulated.median, c.emulated.median, c.diff_ms(), c.diff_percent(),
                  c.diff_frames(),
                  !frames ? "" : *frames ? "; frame counts within one" : "; frame counts apart");
    verdicts::JUnitCase t{"twinbench.compare." + where,
                          scenario::cell_label(c.variant, c.fps, c.body_bytes),
                          std::nullopt, numbers};
    if (!c.within_time()) t.failure = t.name + ": " + numbers;
    suite.cases.push_back(std::move(t));
  }
  return suite;
}

}  // namespace tb::studies
