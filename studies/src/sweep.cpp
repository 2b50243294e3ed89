#include "twinbench/studies/sweep.hpp"

#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "twinbench/parallel/fork_pool.hpp"
#include "twinbench/parallel/stop_signals.hpp"
#include "results.pb.h"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/runner/progress.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::studies {

namespace {

namespace fs = std::filesystem;
using twinbench::Scenario;

constexpr std::string_view kManifest = "sweep.textproto";
constexpr std::string_view kPoints = "points";

using scenario::read_file;

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// ---- Plan: the effective axes, the points, the manifest ----

struct Plan {
  twinbench::SweepManifest manifest;
  std::vector<Axis> axes;
  std::vector<Point> points;
};

// The scenario's `sweep` axes; throws SweepError naming `origin` and, when the scenario's `text` is
// given, the entry's line.
std::vector<Axis> scenario_axes(const Scenario& scenario, const std::string& origin,
                                std::string_view text = {}) {
  std::vector<Axis> axes;
  for (int i = 0; i < scenario.sweep_size(); ++i) {
    try {
      axes.push_back(parse_axis(scenario.sweep(i), scenario));
    } catch (const SweepError& e) {
      const int line = text.empty() ? -1 : scenario::field_line(text, "sweep", i);
      throw SweepError(fmt::format("{}{}: sweep[{}]: {}", origin,
                                   line > 0 ? fmt::format(":{}", line) : "", i, e.what()));
    }
  }
  return axes;
}

// The grid's size (the grammar's bound), checked before its points are made; the error names
// the file.
void check_grid_size(const std::vector<Axis>& axes, const std::string& origin) {
  try {
    studies::check_grid_size(axes);
  } catch (const SweepError& e) {
    throw SweepError(fmt::format("{}: {}", origin, e.what()));
  }
}

Plan plan_sweep(const SweepOptions& a) {
  Scenario scenario = scenario::load_scenario(a.scenario);
  if (a.runs) scenario.set_runs(*a.runs);
  if (a.warmups) scenario.set_warmups(*a.warmups);
  scenario::validate_scenario(scenario, a.scenario);
  sim::require_simulatable(scenario, a.scenario);

  std::vector<Axis> axes =
      scenario_axes(scenario, a.scenario, scenario::read_file(a.scenario).value_or(""));
  std::set<std::string> given;
  for (const std::string& spec : a.axes) {
    Axis axis;
    try {
      axis = parse_axis(spec, scenario);
    } catch (const SweepError& e) {
      throw SweepError(fmt::format("--axis {}", e.what()));
    }
    if (!given.insert(axis.name).second)
      throw SweepError(fmt::format("--axis \"{}\": axis {} is given twice", spec, axis.name));
    const auto same =
        std::find_if(axes.begin(), axes.end(), [&](const Axis& x) { return x.name == axis.name; });
    if (same != axes.end()) {
      *same = std::move(axis);
    } else {
      axes.push_back(std::move(axis));
    }
  }
  for (std::size_t i = 0; i < axes.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (axes[i].name == axes[j].name)
        throw SweepError(
            fmt::format("{}: sweep: axis {} is given twice", a.scenario, axes[i].name));
  if (axes.empty())
    throw SweepError(
        fmt::format("{}: no sweep axes: give --axis NAME=VALUES or `sweep` entries in the scenario",
                    a.scenario));

  check_grid_size(axes, a.scenario);

  Plan plan;
  scenario.clear_sweep();
  for (const Axis& axis : axes) scenario.add_sweep(axis.spec);
  *plan.manifest.mutable_scenario() = scenario;
  plan.manifest.set_seed(a.seed);
  plan.points = enumerate_points(axes);
  // Every point must be a valid, simulatable scenario before anything runs.
  for (const Point& p : plan.points) {
    const Scenario point = apply_point(scenario, axes, p);
    const std::string origin = fmt::format("{} (point {})", a.scenario, p.key);
    scenario::validate_scenario(point, origin);
    sim::require_simulatable(point, origin);
  }
  plan.axes = std::move(axes);
  return plan;
}

std::string manifest_text(const twinbench::SweepManifest& m) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(m, &text);
  return text;
}

fs::path point_file(const fs::path& dir, const Point& p) {
  return dir / kPoints / fmt::format("{:016x}.pb", fnv1a(p.key));
}

// Removes the temporary files (write_file_atomically's ".NAME.tmp-XXXXXX") that a worker killed
// mid-write left beside the given points' files: this run's, or a killed earlier run's. Other
// points' files are left alone: a shard running at once into the same directory may be writing
// them.
void remove_partial_points(const fs::path& dir, const std::vector<const Point*>& points) {
  std::set<std::string> names;
  for (const Point* p : points) names.insert(point_file(dir, *p).filename().string());
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir / kPoints, ec)) {
    const std::string name = entry.path().filename().string();
    const std::size_t tmp = name.find(".tmp-");
    if (name.starts_with('.') && tmp != std::string::npos && names.count(name.substr(1, tmp - 1)))
      fs::remove(entry.path(), ec);
  }
}

// ---- Rows ----

bool is_cell_column(const Axis& axis) {
  return axis.column == "fps" || axis.column == "body_bytes" || axis.column == "variant";
}

// sweep.csv and sweep.jsonl: a row per point and cell, in point order then the cells' order.
std::pair<std::string, std::string> sweep_tables(const std::vector<Axis>& axes,
                                                 const std::vector<Point>& points,
                                                 const std::vector<twinbench::ResultSet>& results) {
  static constexpr std::string_view kStats[] = {"median_ms", "q1_ms",         "q3_ms",
                                                "min_ms",    "max_ms",        "p95_ms",
                                                "p99_ms",    "median_frames", "p99_frames"};
  std::string csv = "point";
  for (const Axis& axis : axes)
    if (!is_cell_column(axis)) csv += "," + axis.column;
  csv += ",fps,body_bytes,variant,runs,failures";
  for (auto s : kStats) csv += fmt::format(",{}", s);
  csv += "\n";
  std::string jsonl;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const Point& p = points[i];
    for (const auto& cell : scenario::collect_cells(results[i])) {
      std::vector<std::pair<std::string, std::string>> fields = {
          {"point", std::to_string(p.index)}};
      for (std::size_t k = 0; k < axes.size(); ++k) {
        if (is_cell_column(axes[k])) continue;
        const auto& v = axes[k].values[p.at[k]];
        fields.emplace_back(axes[k].column, takes_names(axes[k]) ? "\"" + v.text + "\"" : v.text);
      }
      fields.emplace_back("fps", std::to_string(cell.fps));
      fields.emplace_back("body_bytes", std::to_string(cell.body_bytes));
      fields.emplace_back("variant", "\"" + cell.variant + "\"");
      fields.emplace_back("runs", std::to_string(cell.elapsed_ms.size()));
      fields.emplace_back("failures", std::to_string(cell.failures));
      std::vector<std::string> stats(std::size(kStats));
      if (!cell.elapsed_ms.empty()) {
        const auto ms = scenario::summarize(cell.elapsed_ms);
        const auto frames = scenario::summarize(cell.frames);
        const double values[] = {ms.median, ms.q1,  ms.q3,         ms.min,    ms.max,
                                 ms.p95,    ms.p99, frames.median, frames.p99};
        for (std::size_t k = 0; k < stats.size(); ++k) stats[k] = fmt::format("{:.3f}", values[k]);
      }
      for (std::size_t k = 0; k < stats.size(); ++k) fields.emplace_back(kStats[k], stats[k]);

      std::string line, object;
      for (const auto& [name, value] : fields) {
        // Names are unquoted in CSV (they never contain commas or quotes); missing numbers are null
        // in JSON.
        const bool quoted = value.starts_with('"');
        line += (line.empty() ? "" : ",") + (quoted ? value.substr(1, value.size() - 2) : value);
        object += fmt::format("{}\"{}\":{}", object.empty() ? "{" : ",", name,
                              value.empty() ? "null" : value);
      }
      csv += line + "\n";
      jsonl += object + "}\n";
    }
  }
  return {csv, jsonl};
}

// Combines the point files found in `dirs` (all of one sweep) into out/sweep.{csv,jsonl}.
// `partial`: the rows of the points found, the others left out, instead of refusing.
void merge_dirs(const std::vector<fs::path>& dirs, const fs::path& out, bool partial = false) {
  std::string manifest;
  for (const fs::path& dir : dirs) {
    const auto text = read_file(dir / kManifest);
    if (!text)
      throw SweepError(fmt::format("{}: not a sweep directory (no {})", dir.string(), kManifest));
    if (manifest.empty()) {
      manifest = *text;
    } else if (*text != manifest) {
      throw SweepError(
          fmt::format("{}: {} differs from {}'s: the directories hold different sweeps",
                      dir.string(), kManifest, dirs.front().string()));
    }
  }
  twinbench::SweepManifest m;
  const std::string origin = (dirs.front() / kManifest).string();
  scenario::parse_textproto(manifest, origin, m);
  const auto axes = scenario_axes(m.scenario(), origin);
  check_grid_size(axes, origin);
  const auto points = enumerate_points(axes);
  std::vector<Point> found_points;
  std::vector<twinbench::ResultSet> results;
  std::size_t missing = 0;
  std::string first_missing;
  for (const Point& point : points) {
    bool found = false;
    for (const fs::path& dir : dirs) {
      const fs::path file = point_file(dir, point);
      const auto data = read_file(file);
      if (!data) continue;
      if (!results.emplace_back().ParseFromString(*data))
        throw SweepError(fmt::format("{}: cannot parse", file.string()));
      found_points.push_back(point);
      found = true;
      break;
    }
    if (!found && missing++ == 0) first_missing = point.key;
  }
  if (missing > 0 && !partial)
    throw SweepError(
        fmt::format("{} of {} points have no result in the given directories (the first: {}); run "
                    "the missing shards, or resume the sweep",
                    missing, points.size(), first_missing));
  if (found_points.empty())
    throw SweepError(fmt::format("{}: no point has a result", dirs.front().string()));
  const auto [csv, jsonl] = sweep_tables(axes, found_points, results);
  scenario::write_file_atomically(out / "sweep.csv", csv);
  scenario::write_file_atomically(out / "sweep.jsonl", jsonl);
}

// Simulates the points in `todo` in worker processes, each into its file; counts those that ran.
// Returns the first failed one's index in `todo`.
std::optional<std::size_t> run_points(const Plan& plan, const std::vector<const Point*>& todo,
                                      const fs::path& out, const SweepOptions& a,
                                      std::size_t& ran) {
  const Scenario& scenario = plan.manifest.scenario();
  runner::ProgressLine progress("points", !a.quiet);
  std::size_t done = 0;
  if (!todo.empty()) progress.update(0, todo.size());
  try {
    return parallel::run_forked(
        todo.size(), a.jobs,
        [&](std::size_t i) {
          const Point& p = *todo[i];
          runner::RunOptions options;
          options.seed = fnv1a(fmt::format("{}:{}", plan.manifest.seed(), p.key));
          try {
            const auto results =
                sim::run_simulated(apply_point(scenario, plan.axes, p), options, 1);
            scenario::write_file_atomically(point_file(out, p), results.SerializeAsString());
          } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("point {}: {}", p.key, e.what()));
          }
          return 0;
        },
        [&](std::size_t, bool ok) {
          ran += ok ? 1 : 0;
          ++done;
          progress.update(done, todo.size(), ok ? "" : "a point failed");
        });
  } catch (const parallel::Interrupted&) {
    std::cerr << fmt::format(
        "\nsweep: stopped after {} of {} points; they are kept: a re-run resumes.\n", ran,
        todo.size());
    throw;
  }
}

}  // namespace

void run_sweep(const SweepOptions& a) {
  const auto shard =
      a.shard.empty() ? std::pair<std::size_t, std::size_t>{0, 1} : parse_shard(a.shard);
  const Plan plan = plan_sweep(a);
  const fs::path out = a.out.empty()
                           ? fs::path("out") / (plan.manifest.scenario().name() + "-sweep")
                           : fs::path(a.out);
  const std::string manifest = manifest_text(plan.manifest);
  const auto existing = read_file(out / kManifest);
  if (existing && *existing != manifest)
    throw SweepError(
        fmt::format("{}: holds another sweep ({} differs: other scenario, axes, runs or seed); "
                    "choose another --out or remove it",
                    out.string(), kManifest));
  if (!existing) scenario::write_file_atomically(out / kManifest, manifest);

  std::size_t selected = 0;
  std::vector<const Point*> todo;
  for (const Point& p : plan.points) {
    if (p.index % shard.second != shard.first) continue;
    ++selected;
    if (!fs::exists(point_file(out, p))) todo.push_back(&p);
  }
  const std::size_t skipped = selected - todo.size();
  if (a.limit && todo.size() > *a.limit) todo.resize(*a.limit);
  remove_partial_points(out, todo);
  // However the workers stop (a failure, a signal), what they were writing goes.
  struct RemovePartials {
    const fs::path& out;
    const std::vector<const Point*>& todo;
    ~RemovePartials() { remove_partial_points(out, todo); }
  } remove_partials{out, todo};

  std::size_t ran = 0;
  const auto failed = run_points(plan, todo, out, a, ran);

  const std::string scope =
      shard.second > 1 ? fmt::format(" (shard {}/{}: {})", shard.first, shard.second, selected)
                       : "";
  std::cerr << fmt::format("sweep: {} points{}: ran {}, skipped {} already done",
                           plan.points.size(), scope, ran, skipped);
  if (failed) {
    std::cerr << "\n";
    throw std::runtime_error(fmt::format(
        "point {} failed. Finished points are kept: a re-run resumes.", todo[*failed]->key));
  }
  const std::size_t left = selected - skipped - ran;
  if (left > 0) {
    std::cerr << fmt::format("; {} left (--limit): a re-run resumes.\n", left);
    return;
  }
  if (shard.second > 1) {
    std::cerr << fmt::format(
        "; shard complete. Combine the shards with: twinbench merge DIR... --out DIR\n");
    return;
  }
  std::cerr << "\n";
  merge_dirs({out}, out);
  std::cerr << fmt::format("sweep: wrote {}\n", (out / "sweep.{csv,jsonl}").string());
}

void merge_sweeps(const MergeOptions& a) {
  merge_dirs(std::vector<fs::path>(a.dirs.begin(), a.dirs.end()), a.out, a.partial);
  std::cerr << fmt::format("merge: wrote {}\n", (fs::path(a.out) / "sweep.{csv,jsonl}").string());
}

}  // namespace tb::studies
