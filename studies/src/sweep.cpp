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
#include "results.pb.h"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/runner/progress.hpp"
#include "twinbench/scenario/load.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/stats.hpp"

namespace tb::studies {

namespace {

namespace fs = std::filesystem;
using twinbench::Scenario;

constexpr std::string_view kManifest = "sweep.textproto";
constexpr std::string_view kPoints = "points";

// ---- Axes ----

struct Unit {
  std::string_view suffix;  // lower case; matched case-insensitively
  double factor;            // to the axis's base unit
};

struct AxisDef {
  std::string_view name, column;
  std::vector<Unit> units;  // empty: the axis takes names
  bool unit_required;       // a bare number would be ambiguous (10 ms or 10 s?)
  bool whole;               // whole numbers: range points are rounded
  bool (*allowed)(double);
  std::string_view expected;  // what `allowed` accepts, for messages
  void (*apply)(Scenario&, const AxisValue&);
};

const std::vector<Unit> kTime = {{"us", 1e-3}, {"ms", 1}, {"s", 1e3}};
const std::vector<Unit> kRate = {{"bit", 1e-6}, {"kbit", 1e-3}, {"mbit", 1}, {"gbit", 1e3}};
const std::vector<Unit> kBytes = {{"", 1},          {"b", 1},    {"kib", 1024}, {"mib", 1 << 20},
                                  {"gib", 1 << 30}, {"kb", 1e3}, {"mb", 1e6},   {"gb", 1e9}};
const std::vector<Unit> kPlain = {{"", 1}};
const std::vector<Unit> kFraction = {{"", 1}, {"%", 0.01}};

const std::vector<std::string_view> kCongestionControls = {"cubic", "bbr", "newreno"};

twinbench::Link& link(Scenario& s) { return *s.mutable_network()->mutable_link(); }

const std::vector<AxisDef>& axis_defs() {
  static const std::vector<AxisDef> defs = {
      {"rtt", "rtt_ms", kTime, true, false, [](double v) { return v >= 0; },
       "a round-trip time >= 0",
       [](Scenario& s, const AxisValue& v) {
         link(s).set_client_to_server_delay_ms(v.number / 2);
         link(s).set_server_to_client_delay_ms(v.number / 2);
       }},
      {"rate", "rate_mbps", kRate, true, false, [](double v) { return v > 0; },
       "a downlink rate > 0",
       [](Scenario& s, const AxisValue& v) { link(s).set_downlink_mbps(v.number); }},
      {"uplink", "uplink_mbps", kRate, true, false, [](double v) { return v > 0; },
       "an uplink rate > 0",
       [](Scenario& s, const AxisValue& v) { link(s).set_uplink_mbps(v.number); }},
      {"loss", "loss", kFraction, false, false, [](double v) { return v >= 0 && v < 1; },
       "a loss probability from 0 to below 1 (or 0% to below 100%)",
       [](Scenario& s, const AxisValue& v) { link(s).set_loss_rate(v.number); }},
      {"jitter", "jitter_ms", kTime, true, false, [](double v) { return v >= 0; }, "a jitter >= 0",
       [](Scenario& s, const AxisValue& v) { link(s).set_jitter_ms(v.number); }},
      {"policer", "policer_mbps", kRate, true, false, [](double v) { return v >= 0; },
       "a downlink policer rate >= 0 (0: no policer)",
       [](Scenario& s, const AxisValue& v) { link(s).set_downlink_policer_mbps(v.number); }},
      {"bucket", "bucket_bytes", kBytes, false, true, [](double v) { return v >= 0 && v < 0x1p53; },
       "a policer bucket size >= 0",
       [](Scenario& s, const AxisValue& v) {
         link(s).set_downlink_policer_burst_bytes(static_cast<std::uint64_t>(v.number));
       }},
      {"fps", "fps", kPlain, false, true, [](double v) { return v >= 0 && v <= 1000; },
       "a frame cap from 0 (uncapped) to 1000",
       [](Scenario& s, const AxisValue& v) {
         s.clear_frame_caps();
         s.add_frame_caps(static_cast<std::uint32_t>(v.number));
       }},
      {"clients", "clients", kPlain, false, true, [](double v) { return v >= 1 && v <= 1024; },
       "a number of clients from 1 to 1024",
       [](Scenario& s, const AxisValue& v) {
         s.set_clients(static_cast<std::uint32_t>(v.number));
       }},
      {"chunk", "chunk_bytes", kBytes, false, true,
       [](double v) { return v >= 256 && v <= (16 << 20); },
       "a download chunk size from 256 B to 16 MiB",
       [](Scenario& s, const AxisValue& v) {
         s.set_download_chunk_size(static_cast<std::uint32_t>(v.number));
       }},
      {"size", "body_bytes", kBytes, false, true, [](double v) { return v >= 0 && v < 0x1p53; },
       "a body size >= 0 (0 = the ping endpoint)",
       [](Scenario& s, const AxisValue& v) {
         s.clear_body_bytes();
         s.add_body_bytes(static_cast<std::uint64_t>(v.number));
       }},
      {"cc",
       "cc",
       {},
       false,
       false,
       nullptr,
       "the server's congestion control: cubic, bbr or newreno",
       [](Scenario& s, const AxisValue& v) {
         const auto cc = v.text == "bbr"       ? twinbench::BBR
                         : v.text == "newreno" ? twinbench::NEW_RENO
                                               : twinbench::CUBIC;
         s.mutable_network()->mutable_server_tcp()->set_congestion_control(cc);
       }},
      {"variant",
       "variant",
       {},
       false,
       false,
       nullptr,
       "variant names of the scenario",
       [](Scenario& s, const AxisValue& v) {
         auto* variants = s.mutable_variants();
         variants->erase(
             std::remove_if(variants->begin(), variants->end(),
                            [&](const twinbench::Variant& x) { return x.name() != v.text; }),
             variants->end());
       }},
  };
  return defs;
}

using scenario::lower;
using scenario::read_file;
using scenario::split;
using scenario::trim;

std::string units_text(const AxisDef& def) {
  std::string out;
  for (const Unit& u : def.units) {
    if (u.suffix.empty()) continue;
    if (!out.empty()) out += ", ";
    out += u.suffix;
  }
  return out;
}

// One number with its unit ("10ms", "1Gbit", "64KiB", "2%"), in the axis's base unit.
double parse_quantity(const AxisDef& def, std::string_view text) {
  text = trim(text);
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || end == text.data() || !std::isfinite(number))
    throw SweepError(fmt::format("\"{}\" is not a number", text));
  const std::string unit = lower(std::string_view(end, text.data() + text.size() - end));
  if (unit.empty() && def.unit_required)
    throw SweepError(
        fmt::format("\"{}\" has no unit; {} takes {}", text, def.name, units_text(def)));
  const auto u = std::find_if(def.units.begin(), def.units.end(),
                              [&](const Unit& x) { return x.suffix == unit; });
  if (u == def.units.end()) {
    const std::string units = units_text(def);
    throw SweepError(fmt::format("bad unit \"{}\" in \"{}\"; {} takes {}", unit, text, def.name,
                                 units.empty() ? "plain numbers" : units));
  }
  return number * u->factor;
}

std::size_t parse_count(std::string_view text) {
  std::size_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size())
    throw SweepError(fmt::format("point count \"{}\" is not a whole number", text));
  return n;
}

// "A..B/N" or "A..B/N:log": N points from A to B, both included.
std::vector<double> parse_range(const AxisDef& def, std::string_view text) {
  const std::size_t dots = text.find("..");
  const std::size_t slash = text.find('/', dots);
  if (slash == std::string_view::npos)
    throw SweepError(fmt::format("range \"{}\" has no point count; expected A..B/N", text));
  std::string_view count = text.substr(slash + 1);
  bool log = false;
  if (const std::size_t colon = count.find(':'); colon != std::string_view::npos) {
    if (trim(count.substr(colon + 1)) != "log")
      throw SweepError(
          fmt::format("range \"{}\": expected \":log\" or nothing after the point count", text));
    log = true;
    count = count.substr(0, colon);
  }
  const double a = parse_quantity(def, text.substr(0, dots));
  const double b = parse_quantity(def, text.substr(dots + 2, slash - dots - 2));
  const std::size_t n = parse_count(trim(count));
  if (n < 2)
    throw SweepError(fmt::format("range \"{}\": expected at least 2 points, got {}", text, n));
  if (!(a < b)) throw SweepError(fmt::format("range \"{}\" is empty: expected A < B", text));
  if (log && !(a > 0)) throw SweepError(fmt::format("log range \"{}\": expected A > 0", text));
  std::vector<double> values;
  for (std::size_t i = 0; i < n; ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(n - 1);
    values.push_back(i == n - 1 ? b : log ? a * std::pow(b / a, t) : a + (b - a) * t);
  }
  return values;
}

std::vector<AxisValue> parse_names(const AxisDef& def, std::string_view values,
                                   const Scenario& scenario) {
  std::vector<std::string> allowed(kCongestionControls.begin(), kCongestionControls.end());
  if (def.name == "variant") {
    allowed.clear();
    for (const auto& v : scenario.variants()) allowed.push_back(v.name());
  }
  std::vector<AxisValue> out;
  for (std::string_view part : split(values, ',')) {
    const std::string name = def.name == "cc" ? lower(trim(part)) : std::string(trim(part));
    if (name.find("..") != std::string::npos)
      throw SweepError(fmt::format("{} takes names, not ranges", def.name));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw SweepError(fmt::format("unknown {} \"{}\"; expected one of: {}", def.name, name, list));
    }
    out.push_back({name, 0});
  }
  return out;
}

std::vector<AxisValue> parse_numbers(const AxisDef& def, std::string_view values) {
  std::vector<AxisValue> out;
  for (std::string_view part : split(values, ',')) {
    part = trim(part);
    const bool range = part.find("..") != std::string_view::npos;
    for (double v :
         range ? parse_range(def, part) : std::vector<double>{parse_quantity(def, part)}) {
      if (def.whole) {
        // Range points are rounded to whole numbers; a single value must be one.
        if (!range && v != std::round(v))
          throw SweepError(fmt::format("{}: expected a whole number, got \"{}\"", def.name, part));
        v = std::round(v);
      }
      if (!def.allowed(v))
        throw SweepError(fmt::format("{}: expected {}, got \"{}\"", def.name, def.expected, part));
      out.push_back(
          {def.whole ? fmt::format("{}", static_cast<std::uint64_t>(v)) : fmt::format("{}", v), v});
    }
  }
  return out;
}

const AxisDef& def_of(const Axis& axis) {
  const auto& defs = axis_defs();
  return *std::find_if(defs.begin(), defs.end(),
                       [&](const AxisDef& d) { return d.name == axis.name; });
}

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

// Axes from the manifest's scenario (the effective ones); throws SweepError naming `origin`.
std::vector<Axis> manifest_axes(const Scenario& scenario, const std::string& origin) {
  std::vector<Axis> axes;
  for (int i = 0; i < scenario.sweep_size(); ++i) {
    try {
      axes.push_back(parse_axis(scenario.sweep(i), scenario));
    } catch (const SweepError& e) {
      throw SweepError(fmt::format("{}: sweep[{}]: {}", origin, i, e.what()));
    }
  }
  return axes;
}

Plan plan_sweep(const SweepArgs& a) {
  Scenario scenario = scenario::load_scenario(a.scenario);
  if (a.runs) scenario.set_runs(*a.runs);
  if (a.warmups) scenario.set_warmups(*a.warmups);
  scenario::validate_scenario(scenario, a.scenario);
  sim::require_simulatable(scenario, a.scenario);

  std::vector<Axis> axes = manifest_axes(scenario, a.scenario);
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
        fields.emplace_back(axes[k].column,
                            def_of(axes[k]).units.empty() ? "\"" + v.text + "\"" : v.text);
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
void merge_dirs(const std::vector<fs::path>& dirs, const fs::path& out) {
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
  if (!google::protobuf::TextFormat::ParseFromString(manifest, &m))
    throw SweepError(fmt::format("{}: cannot parse", origin));
  const auto axes = manifest_axes(m.scenario(), origin);
  const auto points = enumerate_points(axes);
  std::vector<twinbench::ResultSet> results(points.size());
  std::size_t missing = 0;
  std::string first_missing;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool found = false;
    for (const fs::path& dir : dirs) {
      const fs::path file = point_file(dir, points[i]);
      const auto data = read_file(file);
      if (!data) continue;
      if (!results[i].ParseFromString(*data))
        throw SweepError(fmt::format("{}: cannot parse", file.string()));
      found = true;
      break;
    }
    if (!found && missing++ == 0) first_missing = points[i].key;
  }
  if (missing > 0)
    throw SweepError(
        fmt::format("{} of {} points have no result in the given directories (the first: {}); run "
                    "the missing shards, or resume the sweep",
                    missing, points.size(), first_missing));
  const auto [csv, jsonl] = sweep_tables(axes, points, results);
  scenario::write_file_atomically(out / "sweep.csv", csv);
  scenario::write_file_atomically(out / "sweep.jsonl", jsonl);
}

std::pair<std::size_t, std::size_t> parse_shard(const std::string& spec) {
  const auto parts = split(spec, '/');
  std::size_t i = 0, n = 0;
  try {
    if (parts.size() != 2) throw SweepError("");
    i = parse_count(parts[0]);
    n = parse_count(parts[1]);
  } catch (const SweepError&) {
    throw SweepError(
        fmt::format("--shard \"{}\": expected I/N with whole numbers, e.g. 0/4", spec));
  }
  if (n < 1 || i >= n) throw SweepError(fmt::format("--shard \"{}\": expected 0 <= I < N", spec));
  return {i, n};
}

}  // namespace

Axis parse_axis(const std::string& spec, const Scenario& scenario) {
  try {
    const std::size_t eq = spec.find('=');
    const std::string name = lower(trim(std::string_view(spec).substr(0, eq)));
    const auto& defs = axis_defs();
    const auto def =
        std::find_if(defs.begin(), defs.end(), [&](const AxisDef& d) { return d.name == name; });
    if (def == defs.end()) {
      std::string names;
      for (const auto& d : defs) names += (names.empty() ? "" : ", ") + std::string(d.name);
      throw SweepError(fmt::format("unknown axis \"{}\"; expected one of: {}", name, names));
    }
    if (eq == std::string::npos || trim(std::string_view(spec).substr(eq + 1)).empty())
      throw SweepError(
          fmt::format("no values; expected {}=VALUE,VALUE,... or {}=A..B/N", name, name));
    const std::string_view values = std::string_view(spec).substr(eq + 1);
    Axis axis{name, std::string(def->column), spec, {}};
    axis.values =
        def->units.empty() ? parse_names(*def, values, scenario) : parse_numbers(*def, values);
    for (std::size_t i = 0; i < axis.values.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (axis.values[i].text == axis.values[j].text)
          throw SweepError(
              fmt::format("{} value {} appears twice{}", name, axis.values[i].text,
                          def->whole ? " (range points are rounded to whole numbers)" : ""));
    return axis;
  } catch (const SweepError& e) {
    throw SweepError(fmt::format("\"{}\": {}", spec, e.what()));
  }
}

std::vector<Point> enumerate_points(const std::vector<Axis>& axes) {
  std::vector<Point> points;
  std::vector<std::size_t> at(axes.size(), 0);
  for (std::size_t index = 0;; ++index) {
    Point p{index, at, {}};
    for (std::size_t k = 0; k < axes.size(); ++k)
      p.key +=
          fmt::format("{}{}={}", k == 0 ? "" : ",", axes[k].column, axes[k].values[at[k]].text);
    points.push_back(std::move(p));
    std::size_t k = axes.size();
    while (k > 0 && ++at[k - 1] == axes[k - 1].values.size()) at[--k] = 0;
    if (k == 0) return points;
  }
}

Scenario apply_point(const Scenario& scenario, const std::vector<Axis>& axes, const Point& point) {
  Scenario s = scenario;
  for (std::size_t k = 0; k < axes.size(); ++k)
    def_of(axes[k]).apply(s, axes[k].values[point.at[k]]);
  return s;
}

void sweep_command(const SweepArgs& a) {
  const Plan plan = plan_sweep(a);
  const auto shard =
      a.shard.empty() ? std::pair<std::size_t, std::size_t>{0, 1} : parse_shard(a.shard);
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

  const Scenario& scenario = plan.manifest.scenario();
  runner::ProgressLine progress("points", !a.quiet);
  std::size_t done = 0, ran = 0;
  if (!todo.empty()) progress.update(0, todo.size());
  const auto failed = parallel::run_forked(
      todo.size(), a.jobs,
      [&](std::size_t i) {
        const Point& p = *todo[i];
        runner::RunOptions options;
        options.seed = fnv1a(fmt::format("{}:{}", plan.manifest.seed(), p.key));
        try {
          const auto results = sim::run_simulated(apply_point(scenario, plan.axes, p), options, 1);
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

void merge_command(const MergeArgs& a) {
  merge_dirs(std::vector<fs::path>(a.dirs.begin(), a.dirs.end()), a.out);
  std::cerr << fmt::format("merge: wrote {}\n", (fs::path(a.out) / "sweep.{csv,jsonl}").string());
}

}  // namespace tb::studies
