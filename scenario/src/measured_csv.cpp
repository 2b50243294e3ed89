#include "twinbench/scenario/measured_csv.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <cmath>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::scenario {

namespace {

// The fields of one CSV line, trimmed (the reference files have no quoted fields).
std::vector<std::string> csv_fields(std::string_view line) {
  std::vector<std::string> fields;
  for (const auto field : split(line, ',')) fields.emplace_back(trim(field));
  return fields;
}

template <typename T>
T number(const std::string& text, const std::string& where, const std::string& column) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    throw InputError(
        fmt::format("{}: {}: expected a number, got '{}'", where, column, printable(text)));
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(value) || value < 0) {
      throw InputError(fmt::format("{}: {}: expected a finite number >= 0, got '{}'", where, column,
                                   printable(text)));
    }
  }
  return value;
}

// The header's column indices by name; a name given twice is an error (which of the two would be
// read?).
std::map<std::string, int> header_columns(const std::vector<std::string>& names,
                                          const std::string& where) {
  std::map<std::string, int> columns;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!columns.emplace(names[i], static_cast<int>(i)).second)
      throw InputError(fmt::format("{}: header: expected distinct column names, got '{}' twice",
                                   where, printable(names[i])));
  }
  return columns;
}

}  // namespace

std::vector<MeasuredCell> parse_measured_csv(std::string_view text, const std::string& origin) {
  std::vector<MeasuredCell> cells;
  std::map<std::string, int> columns;
  std::map<std::string, std::string> seen;
  std::istringstream in{std::string(text)};
  std::string line;
  int number_of_line = 0;
  const std::vector<std::string> required = {"scenario", "fps", "body_bytes", "variant",
                                             "median_ms"};
  while (std::getline(in, line)) {
    ++number_of_line;
    const std::string where = fmt::format("{}:{}", origin, number_of_line);
    if (line.empty() || line == "\r" || line.front() == '#') continue;
    const auto fields = csv_fields(line);
    if (columns.empty()) {
      columns = header_columns(fields, where);
      for (const auto& name : required) {
        if (!columns.count(name)) {
          throw InputError(fmt::format("{}: header: expected a column '{}' (columns {}), got '{}'",
                                       where, name, fmt::join(required, ","), printable(line)));
        }
      }
      continue;
    }
    if (fields.size() != columns.size()) {
      throw InputError(fmt::format("{}: expected {} comma-separated fields like the header, got {}",
                                   where, columns.size(), fields.size()));
    }
    auto field = [&](const char* name) -> const std::string& {
      return fields[static_cast<std::size_t>(columns.at(name))];
    };
    MeasuredCell c;
    c.origin = where;
    c.scenario = field("scenario");
    c.variant = field("variant");
    if (c.scenario.empty()) throw InputError(where + ": scenario: expected a name, got nothing");
    if (c.variant.empty()) throw InputError(where + ": variant: expected a name, got nothing");
    c.fps = number<std::uint32_t>(field("fps"), where, "fps");
    if (c.fps > kMaxFrameCap)
      throw InputError(fmt::format("{}: fps: expected a frame cap from 0 (uncapped) to {}, got {}",
                                   where, kMaxFrameCap, c.fps));
    c.body_bytes = number<std::uint64_t>(field("body_bytes"), where, "body_bytes");
    if (c.body_bytes > kMaxBodyBytes)
      throw InputError(
          fmt::format("{}: body_bytes: expected a body size from 0 (ping) to 16 GiB, "
                      "got {}",
                      where, c.body_bytes));
    c.median_ms = number<double>(field("median_ms"), where, "median_ms");
    if (columns.count("min_ms") && columns.count("q1_ms") && columns.count("q3_ms") &&
        columns.count("max_ms")) {
      scenario::Summary s{};
      s.min = number<double>(field("min_ms"), where, "min_ms");
      s.q1 = number<double>(field("q1_ms"), where, "q1_ms");
      s.median = c.median_ms;
      s.q3 = number<double>(field("q3_ms"), where, "q3_ms");
      s.max = number<double>(field("max_ms"), where, "max_ms");
      if (!(s.min <= s.q1 && s.q1 <= s.median && s.median <= s.q3 && s.q3 <= s.max)) {
        throw InputError(where + ": expected min_ms <= q1_ms <= median_ms <= q3_ms <= max_ms");
      }
      c.summary = s;
    }
    const std::string key = cell_key(c.scenario, c.fps, c.body_bytes, c.variant);
    if (const auto it = seen.find(key); it != seen.end()) {
      throw InputError(
          fmt::format("{}: cell {} appears twice (first at {})", where, key, it->second));
    }
    seen[key] = where;
    cells.push_back(std::move(c));
  }
  if (columns.empty()) throw InputError(origin + ": expected a header line, got an empty file");
  if (cells.empty()) throw InputError(origin + ": expected at least one cell, got none");
  return cells;
}

std::vector<MeasuredCell> load_measured_csv(const std::string& path) {
  const auto text = read_file(path);
  if (!text)
    throw InputError(
        fmt::format("{}: cannot open: {}", path, errno ? std::strerror(errno) : "cannot read"));
  return parse_measured_csv(*text, path);
}

void attach_summaries(std::vector<MeasuredCell>& medians,
                      const std::vector<MeasuredCell>& summaries) {
  std::map<std::string, const MeasuredCell*> by_key;
  for (const auto& s : summaries) by_key[cell_key(s.scenario, s.fps, s.body_bytes, s.variant)] = &s;
  for (auto& m : medians) {
    const auto it = by_key.find(cell_key(m.scenario, m.fps, m.body_bytes, m.variant));
    if (it != by_key.end() && it->second->summary) m.summary = it->second->summary;
  }
}

}  // namespace tb::scenario
