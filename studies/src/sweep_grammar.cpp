#include "twinbench/studies/sweep_grammar.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>
#include <unordered_set>

#include <fmt/format.h>

#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::studies {

namespace {

using twinbench::Scenario;

constexpr std::size_t kMaxPoints = kMaxSweepPoints;

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
      {"size", "body_bytes", kBytes, false, true,
       [](double v) { return v >= 0 && v <= static_cast<double>(scenario::kMaxBodyBytes); },
       "a body size from 0 (the ping endpoint) to 16 GiB",
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
      {"trace",
       "trace",
       {},
       false,
       false,
       nullptr,
       "delivery trace files (Mahimahi's format), relative to the current directory",
       [](Scenario& s, const AxisValue& v) {
         const auto ms = scenario::read_delivery_trace(v.text);
         auto* trace = link(s).mutable_downlink_trace();
         trace->set_file(v.text);
         trace->mutable_opportunities_ms()->Assign(ms.begin(), ms.end());
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
  if (n > kMaxPoints)
    throw SweepError(
        fmt::format("range \"{}\": expected at most {} points, got {}", text, kMaxPoints, n));
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
    if (def.name == "trace") {
      // Any trace file that reads: its errors name the file and line now, not at a point.
      try {
        scenario::read_delivery_trace(name);
      } catch (const scenario::ScenarioError& e) {
        throw SweepError(e.what());
      }
      out.push_back({name, 0});
      continue;
    }
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
    const std::vector<double> points =
        range ? parse_range(def, part) : std::vector<double>{parse_quantity(def, part)};
    // Each range is bounded, so the axis is too before its values are made: a list of ranges
    // could otherwise ask for millions.
    if (points.size() > kMaxPoints - out.size())
      throw SweepError(fmt::format("{}: expected at most {} values on an axis, got more (at \"{}\")",
                                   def.name, kMaxPoints, part));
    for (double v : points) {
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
    std::unordered_set<std::string_view> seen;  // not pairwise: ranges hold many values
    seen.reserve(axis.values.size());
    for (const AxisValue& v : axis.values)
      if (!seen.insert(v.text).second)
        throw SweepError(
            fmt::format("{} value {} appears twice{}", name, v.text,
                        def->whole ? " (range points are rounded to whole numbers)" : ""));
    return axis;
  } catch (const SweepError& e) {
    throw SweepError(fmt::format("\"{}\": {}", spec, e.what()));
  }
}

namespace {
std::size_t grid_size(const std::vector<Axis>& axes) {
  std::size_t count = 1;
  for (const Axis& axis : axes) {
    count = axis.values.size() > kMaxPoints / count ? kMaxPoints + 1 : count * axis.values.size();
    if (count > kMaxPoints)
      throw SweepError(fmt::format(
          "sweep: expected at most {} points in the grid, got more (axes up to {} make more)",
          kMaxPoints, axis.name));
  }
  return count;
}
}  // namespace

void check_grid_size(const std::vector<Axis>& axes) { grid_size(axes); }

std::vector<Point> enumerate_points(const std::vector<Axis>& axes) {
  std::vector<Point> points;
  const std::size_t size = grid_size(axes);
  if (size == 0) return points;  // an axis without values spans no point
  points.reserve(size);
  std::vector<std::size_t> at(axes.size(), 0);
  for (std::size_t index = 0;; ++index) {
    // The key is sized first and appended in place: grids of up to kMaxSweepPoints points are
    // enumerated whole, so one allocation per key rather than one per axis and growth step.
    Point p{index, at, {}};
    std::size_t key_size = 0;
    for (std::size_t k = 0; k < axes.size(); ++k)
      key_size += (k > 0) + axes[k].column.size() + 1 + axes[k].values[at[k]].text.size();
    p.key.reserve(key_size);
    for (std::size_t k = 0; k < axes.size(); ++k) {
      if (k > 0) p.key += ',';
      p.key.append(axes[k].column).append(1, '=').append(axes[k].values[at[k]].text);
    }
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

bool takes_names(const Axis& axis) { return def_of(axis).units.empty(); }

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

}  // namespace tb::studies
