#include "twinbench/scenario/report.hpp"

#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>
#include <fmt/format.h>

#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::scenario {
namespace {

namespace fs = std::filesystem;

// Column order of the published tables (BENCHMARK.md), used when a scenario's variants are among
// them.
constexpr std::string_view kPublishedColumns[] = {"nat_coop", "c3_coop", "c3s_coop",
                                                  "nat_thr",  "c3_thr",  "c3s_thr"};

template <class List, class T>
std::size_t rank(const List& list, const T& value) {
  return static_cast<std::size_t>(std::find(std::begin(list), std::end(list), value) -
                                  std::begin(list));
}

std::string number(double v) { return fmt::format("{:.1f}", v); }

// The cells and table layout of one scenario's section of the Markdown report.
struct Section {
  std::string name;
  std::vector<const Cell*> cells;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> rows;  // (fps, body_bytes), in cell order
  std::vector<std::string> columns;                           // variants

  std::size_t caps = 0, sizes = 0;  // distinct values among rows

  // The published layout: frame rates as rows for a frame-cap sweep at one size, else body sizes.
  bool by_fps() const { return caps > 1 && sizes == 1; }
  std::string row_label(std::uint32_t fps, std::uint64_t body) const {
    if (by_fps()) return fps_label(fps);
    if (caps <= 1) return size_label(body);
    return fps_label(fps) + ", " + size_label(body);
  }
  const Cell* find(std::uint32_t fps, std::uint64_t body, const std::string& variant) const {
    for (const Cell* c : cells)
      if (c->fps == fps && c->body_bytes == body && c->variant == variant) return c;
    return nullptr;
  }
};

std::vector<Section> sections(const std::vector<Cell>& cells) {
  std::vector<Section> out;
  for (const Cell& c : cells) {
    if (out.empty() || out.back().name != c.scenario) out.push_back({c.scenario, {}, {}, {}, 0, 0});
    Section& s = out.back();
    s.cells.push_back(&c);
    if (rank(s.rows, std::pair{c.fps, c.body_bytes}) == s.rows.size()) {
      s.caps += std::none_of(s.rows.begin(), s.rows.end(),
                             [&](const auto& r) { return r.first == c.fps; });
      s.sizes += std::none_of(s.rows.begin(), s.rows.end(),
                              [&](const auto& r) { return r.second == c.body_bytes; });
      s.rows.emplace_back(c.fps, c.body_bytes);
    }
    if (rank(s.columns, c.variant) == s.columns.size()) s.columns.push_back(c.variant);
  }
  for (Section& s : out) {
    const bool published =
        std::all_of(s.columns.begin(), s.columns.end(), [](const std::string& v) {
          return rank(kPublishedColumns, v) < std::size(kPublishedColumns);
        });
    if (published)
      std::stable_sort(s.columns.begin(), s.columns.end(),
                       [](const std::string& a, const std::string& b) {
                         return rank(kPublishedColumns, a) < rank(kPublishedColumns, b);
                       });
  }
  return out;
}

// A table of one statistic per (row, variant), laid out like the published results tables.
std::string median_table(const Section& s, double (*value)(const Cell&)) {
  std::string out = fmt::format("| {} |", s.by_fps()    ? "Frame rate"
                                          : s.caps <= 1 ? "Body size"
                                                        : "Frame rate, body size");
  for (const auto& v : s.columns) out += fmt::format(" {} |", md_cell(v));
  out += "\n|---|";
  for (std::size_t i = 0; i < s.columns.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& [fps, body] : s.rows) {
    out += fmt::format("| {} |", s.row_label(fps, body));
    for (const auto& v : s.columns) {
      const Cell* c = s.find(fps, body, v);
      out += fmt::format(" {} |", c == nullptr            ? "—"
                                  : c->elapsed_ms.empty() ? "failed"
                                                          : number(value(*c)));
    }
    out += "\n";
  }
  return out;
}

double median_ms(const Cell& c) { return summarize(c.elapsed_ms).median; }
double median_frames(const Cell& c) { return summarize(c.frames).median; }

}  // namespace

std::string fps_label(std::uint32_t fps) {
  return fps == 0 ? "uncapped" : fmt::format("{} fps", fps);
}

std::string size_label(std::uint64_t bytes) {
  if (bytes != 0 && bytes % (1u << 20) == 0) return fmt::format("{} MB", bytes >> 20);
  if (bytes != 0 && bytes % 1024 == 0) return fmt::format("{} KB", bytes >> 10);
  return fmt::format("{} B", bytes);
}

std::string cell_label(const std::string& variant, std::uint32_t fps, std::uint64_t body_bytes) {
  return fmt::format("{}, {}, {}", variant, fps_label(fps), size_label(body_bytes));
}

std::vector<Cell> collect_cells(const twinbench::ResultSet& results) {
  std::vector<Cell> cells;
  std::vector<std::string> scenarios;        // by first appearance
  std::map<std::string, std::size_t> index;  // by cell_key
  for (const auto& s : results.samples()) {
    if (s.warmup()) continue;
    auto [it, added] = index.try_emplace(
        cell_key(s.scenario(), s.fps(), s.body_bytes(), s.variant()), cells.size());
    if (added) {
      cells.push_back({s.scenario(), s.fps(), s.body_bytes(), s.variant(), {}, {}, 0, {}});
      if (rank(scenarios, s.scenario()) == scenarios.size()) scenarios.push_back(s.scenario());
    }
    Cell& c = cells[it->second];
    if (s.result() == "success") {
      c.elapsed_ms.push_back(s.elapsed_ms());
      c.frames.push_back(static_cast<double>(s.frames()));
    } else if (c.failures++ == 0) {
      c.first_error = s.error().empty() ? s.result() : s.error();
    }
  }
  // Values the scenario does not list rank after those it does, then by value.
  const auto& sc = results.scenario();
  std::vector<std::string> variants;
  for (const auto& v : sc.variants()) variants.push_back(v.name());
  const auto key = [&](const Cell& c) {
    return std::tuple(rank(scenarios, c.scenario), rank(sc.frame_caps(), c.fps), c.fps,
                      rank(sc.body_bytes(), c.body_bytes), c.body_bytes, rank(variants, c.variant),
                      c.variant);
  };
  std::sort(cells.begin(), cells.end(),
            [&](const Cell& a, const Cell& b) { return key(a) < key(b); });
  return cells;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string md_cell(std::string s) {
  std::string out;
  for (char c : s)
    out += c == '|'                 ? std::string("\\|")
           : c == '\n' || c == '\r' ? std::string(" ")
                                    : std::string(1, c);
  return out;
}

std::string message_json(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  const auto status = google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok())
    throw std::runtime_error("cannot convert results to JSON: " + status.ToString());
  return out;
}

std::string results_json(const twinbench::ResultSet& results) { return message_json(results); }

twinbench::ResultSet read_results_json(const std::filesystem::path& file) {
  const auto text = read_file(file);
  if (!text)
    throw InputError(fmt::format("{}: cannot read: {}", file.string(), std::strerror(errno)));
  twinbench::ResultSet results;
  const auto status = google::protobuf::util::JsonStringToMessage(*text, &results);
  if (!status.ok())
    throw InputError(fmt::format("{}: expected a results.json written by twinbench: {}",
                                 file.string(), status.ToString()));
  return results;
}

std::string results_csv(const twinbench::ResultSet& results) {
  std::string out = "scenario,fps,body_bytes,variant,median_ms,min_ms,q1_ms,q3_ms,max_ms,runs\n";
  for (const Cell& c : collect_cells(results)) {
    out += fmt::format("{},{},{},{},", csv_field(c.scenario), c.fps, c.body_bytes,
                       csv_field(c.variant));
    if (c.elapsed_ms.empty()) {
      out += ",,,,,0\n";
      continue;
    }
    const Summary s = summarize(c.elapsed_ms);
    out += fmt::format("{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{}\n", s.median, s.min, s.q1, s.q3,
                       s.max, s.n);
  }
  return out;
}

std::string results_markdown(const twinbench::ResultSet& results, std::string_view appendix) {
  const auto& sc = results.scenario();
  const auto& run = results.run();
  std::string out = fmt::format("# twinbench results: {}\n\n", md_cell(sc.name()));
  if (!sc.description().empty()) out += md_cell(sc.description()) + "\n\n";
  out += fmt::format(
      "Run: backend {}, server {}, server nodelay {}, keep_alive {}, seed {}, engine {}, chunk "
      "size {}, "
      "runs {}, warmups {}{}.\n\n",
      run.backend().empty() ? "?" : run.backend(),
      run.server().empty() ? "(built-in)" : run.server(), run.server_nodelay() ? "on" : "off",
      run.keep_alive() ? "on" : "off", run.seed(), twinbench::EngineProfile_Name(sc.engine()),
      sc.download_chunk_size(), sc.runs(), sc.warmups(),
      run.twinbench_version().empty() ? "" : ", twinbench " + run.twinbench_version());
  if (run.host_timing().wakeups() > 0) {  // live and emulated runs: what the machine added
    const auto& t = run.host_timing();
    out += fmt::format(
        "Client wake-ups: {} timed sleeps ended late by p50 {:.0f} us, p99 {:.0f} us, max {:.0f} "
        "us (the model assumes on time; docs/emulated-path.md).\n\n",
        t.wakeups(), t.p50_us(), t.p99_us(), t.max_us());
  }
  out += "Times are in milliseconds; medians of the measured runs (warmups not counted).\n";

  const std::vector<Cell> cells = collect_cells(results);
  for (const Section& s : sections(cells)) {
    out += fmt::format("\n## {}\n\n### Median time (ms)\n\n", md_cell(s.name));
    out += median_table(s, median_ms);
    out += "\n### Median frames\n\n";
    out += median_table(s, median_frames);
    out +=
        "\n### Five-number summaries (ms)\n\n"
        "| Variant | Cell | min | q1 | median | q3 | max | p95 | p99 | runs | frames |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Cell* c : s.cells) {
      const std::string label = s.row_label(c->fps, c->body_bytes);
      if (c->elapsed_ms.empty()) {
        out += fmt::format("| {} | {} | | | | | | | | 0 | |\n", md_cell(c->variant), label);
        continue;
      }
      const Summary m = summarize(c->elapsed_ms);
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                         md_cell(c->variant), label, number(m.min), number(m.q1), number(m.median),
                         number(m.q3), number(m.max), number(m.p95), number(m.p99), m.n,
                         number(median_frames(*c)));
    }
    if (std::any_of(s.cells.begin(), s.cells.end(),
                    [](const Cell* c) { return c->failures > 0; })) {
      out +=
          "\n### Failures (measured runs)\n\n| Cell | Variant | failed | first error "
          "|\n|---|---|---:|---|\n";
      for (const Cell* c : s.cells)
        if (c->failures > 0)
          out += fmt::format("| {} | {} | {} | {} |\n", s.row_label(c->fps, c->body_bytes),
                             md_cell(c->variant), c->failures, md_cell(c->first_error));
    }
  }
  if (!appendix.empty()) out += "\n" + std::string(appendix);
  return out;
}

std::string cell_key(const std::string& scenario, std::uint32_t fps, std::uint64_t body_bytes,
                     const std::string& variant) {
  return fmt::format("{},{},{},{}", scenario, fps, body_bytes, variant);
}

void write_results(const twinbench::ResultSet& results, const fs::path& dir,
                   std::string_view markdown_appendix) {
  write_file_atomically(dir / "results.json", results_json(results));
  write_file_atomically(dir / "results.csv", results_csv(results));
  write_file_atomically(dir / "results.md", results_markdown(results, markdown_appendix));
}

}  // namespace tb::scenario
