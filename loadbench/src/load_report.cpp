#include "twinbench/loadbench/load_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <numeric>
#include <stdexcept>

#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/stats.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::loadbench {
namespace {

using scenario::csv_field;
using scenario::md_cell;
using scenario::message_json;
using scenario::quantile_sorted;
using scenario::write_file_atomically;

using Repetitions = std::vector<twinbench::LoadRepetition>;

// A figure summarised across repetitions.
struct Figure {
  const char* column;  // CSV prefix
  const char* title;   // Markdown row
  std::function<double(const twinbench::LoadRepetition&)> value;
};

const std::vector<Figure>& figures() {
  static const std::vector<Figure> all = {
      {"rps", "throughput (req/s)", [](const auto& r) { return r.requests_per_s(); }},
      {"mib_s", "response bodies (MiB/s)", [](const auto& r) { return r.mib_per_s(); }},
      {"p50_ms", "p50 latency (ms)", [](const auto& r) { return r.latency_ms().p50(); }},
      {"p95_ms", "p95 latency (ms)", [](const auto& r) { return r.latency_ms().p95(); }},
      {"p99_ms", "p99 latency (ms)", [](const auto& r) { return r.latency_ms().p99(); }},
      {"p999_ms", "p99.9 latency (ms)", [](const auto& r) { return r.latency_ms().p999(); }},
      {"max_ms", "max latency (ms)", [](const auto& r) { return r.latency_ms().max(); }},
      {"errors", "errors", [](const auto& r) { return static_cast<double>(r.errors()); }},
  };
  return all;
}

struct Spread {
  double median, min, max;
};

Spread spread(const Repetitions& reps, const Figure& f) {
  if (reps.empty()) throw std::invalid_argument("a load summary of no repetitions");
  std::vector<double> values;
  for (const auto& r : reps) values.push_back(f.value(r));
  std::sort(values.begin(), values.end());
  return {quantile_sorted(values, 0.5), values.front(), values.back()};
}

std::string fixed(double v) { return fmt::format("{:.3f}", v); }

}  // namespace

void fill_load_figures(twinbench::LoadRepetition& r, const std::vector<double>& sorted_ms,
                       double body_bytes) {
  r.set_responses(sorted_ms.size());
  const double seconds = r.measured_s() > 0 ? r.measured_s() : 1.0;
  r.set_requests_per_s(static_cast<double>(sorted_ms.size()) / seconds);
  r.set_mib_per_s(body_bytes / (1024.0 * 1024.0) / seconds);
  if (sorted_ms.empty()) return;  // no response: the latencies stay 0 and errors say why
  auto& l = *r.mutable_latency_ms();
  l.set_p50(quantile_sorted(sorted_ms, 0.50));
  l.set_p95(quantile_sorted(sorted_ms, 0.95));
  l.set_p99(quantile_sorted(sorted_ms, 0.99));
  l.set_p999(quantile_sorted(sorted_ms, 0.999));
  l.set_max(sorted_ms.back());
  l.set_mean(std::accumulate(sorted_ms.begin(), sorted_ms.end(), 0.0) /
             static_cast<double>(sorted_ms.size()));
}

std::string load_summary_csv_header() {
  std::string out =
      "label,server,tls,server_threads,io_model,server_writes,client_nagle,server_nagle,clients,"
      "window,requests,repetitions";
  for (const auto& f : figures()) out += fmt::format(",{0}_median,{0}_min,{0}_max", f.column);
  return out + "\n";
}

std::string load_summary_csv_row(const Repetitions& reps) {
  if (reps.empty()) throw std::invalid_argument("a load summary of no repetitions");
  const auto& c = reps.front().config();
  std::string out =
      fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}", csv_field(c.label()),
                  csv_field(c.server()), c.tls() ? "https" : "http", c.server_threads(),
                  csv_field(c.io_model()), csv_field(c.server_writes()), c.client_nagle(),
                  c.server_nagle(), c.clients(), c.window(), csv_field(c.requests()), reps.size());
  for (const auto& f : figures()) {
    const Spread s = spread(reps, f);
    out += fmt::format(",{},{},{}", fixed(s.median), fixed(s.min), fixed(s.max));
  }
  return out + "\n";
}

std::string load_summary_markdown(const Repetitions& reps) {
  if (reps.empty()) throw std::invalid_argument("a load summary of no repetitions");
  const auto& c = reps.front().config();
  const auto& m = reps.front().machine();
  std::string out = fmt::format("# Load: {}\n\n", md_cell(c.label()));
  out += fmt::format(
      "- server: {} at {} ({}), {} thread(s), io-model {}, {} writes\n"
      "- Nagle: client {}, server {}\n"
      "- {} keep-alive connections, {} requests pipelined on each; requests: {}\n"
      "- {} generator thread(s); warmup {} s, measured {} s; {} repetition(s), each against a "
      "fresh server process when twinbench serve is started by the run\n"
      "- machine: {}, {} cores, {} build, twinbench {}{}\n\n",
      c.server(), c.url(), c.tls() ? "HTTPS" : "HTTP", c.server_threads(), c.io_model(),
      c.server_writes(), c.client_nagle(), c.server_nagle(), c.clients(), c.window(), c.requests(),
      c.client_threads(), c.warmup_s(), c.duration_s(), reps.size(), m.cpu_model(), m.cores(),
      m.build_type(), m.twinbench_version(), m.note().empty() ? "" : "; " + m.note());
  out += "| figure | median | min | max |";
  for (const auto& r : reps) out += fmt::format(" rep {} |", r.repetition());
  out += "\n|---|---:|---:|---:|";
  for (std::size_t i = 0; i < reps.size(); ++i) out += "---:|";
  out += "\n";
  for (const auto& f : figures()) {
    const Spread s = spread(reps, f);
    out +=
        fmt::format("| {} | {} | {} | {} |", f.title, fixed(s.median), fixed(s.min), fixed(s.max));
    for (const auto& r : reps) out += fmt::format(" {} |", fixed(f.value(r)));
    out += "\n";
  }
  return out;
}

void write_load_results(const Repetitions& reps, const std::filesystem::path& dir) {
  for (const auto& r : reps)
    write_file_atomically(dir / fmt::format("repetition-{}.json", r.repetition()), message_json(r));
  write_file_atomically(dir / "summary.csv",
                        load_summary_csv_header() + load_summary_csv_row(reps));
  write_file_atomically(dir / "summary.md", load_summary_markdown(reps));
}

}  // namespace tb::loadbench
