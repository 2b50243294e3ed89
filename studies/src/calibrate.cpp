#include "twinbench/studies/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <tuple>
#include <stdexcept>

#include <fmt/format.h>
#include <google/protobuf/text_format.h>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/report.hpp"

namespace tb::studies {

namespace {

std::vector<double> range(double from, double to, double step) {
  std::vector<double> v;
  for (int i = 0;; ++i) {
    const double x = from + i * step;
    if (x > to + 1e-9) break;
    v.push_back(std::round(x * 1e6) / 1e6);
  }
  return v;
}

std::vector<std::string> split_on(std::string_view text, char sep) {
  const auto parts = scenario::split(text, sep);
  return {parts.begin(), parts.end()};
}

std::string value_text(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::vector<CalibrationParameter> calibration_parameters() {
  std::vector<CalibrationParameter> p;
  p.push_back({"tls_max_version",
               "highest TLS version both sides allow (1.2 or 1.3)",
               {1.2, 1.3},
               [](const twinbench::Scenario& s) {
                 return s.tls().max_version() == twinbench::TLS1_2 ? 1.2 : 1.3;
               },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_tls()->set_max_version(v < 1.25 ? twinbench::TLS1_2 : twinbench::TLS1_3);
               }});
  p.push_back({"handshake_cpu_ms", "server CPU time before its first handshake flight",
               range(0, 40, 1),
               [](const twinbench::Scenario& s) { return s.tls().handshake_cpu_ms(); },
               [](twinbench::Scenario& s, double v) { s.mutable_tls()->set_handshake_cpu_ms(v); }});
  // Bounded to what Linux does: a delayed ACK waits TCP_ATO_MIN (40 ms) and fires from a timer
  // with some slack (40-48 ms measured on Linux 6.18, docs/tcp-model.md); lower values would
  // stand for something else.
  p.push_back({"server_delayed_ack_ms",
               "the server's delayed-ACK timeout: Linux's TCP_ATO_MIN (40 ms) plus timer slack "
               "(40-48 ms measured)",
               range(40, 48, 1),
               [](const twinbench::Scenario& s) {
                 return s.network().server_tcp().has_delayed_ack_ms()
                            ? s.network().server_tcp().delayed_ack_ms()
                            : 40.0;
               },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_network()->mutable_server_tcp()->set_delayed_ack_ms(v);
               }});
  p.push_back({"rtt_ms", "base RTT of the path, split evenly between the two one-way delays",
               range(20, 40, 0.5),
               [](const twinbench::Scenario& s) {
                 return s.network().link().client_to_server_delay_ms() +
                        s.network().link().server_to_client_delay_ms();
               },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_network()->mutable_link()->set_client_to_server_delay_ms(v / 2);
                 s.mutable_network()->mutable_link()->set_server_to_client_delay_ms(v / 2);
               }});
  p.push_back({"jitter_ms",
               "extra one-way delay per packet, uniform in [0, jitter] each way, order kept",
               range(0, 4, 0.25),
               [](const twinbench::Scenario& s) { return s.network().link().jitter_ms(); },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_network()->mutable_link()->set_jitter_ms(v);
               },
               /*only_when_named=*/true});
  p.push_back(
      {"server_think_ms",
       "server time from a complete request to the response (Nginx -> Daphne -> Django)",
       range(0, 10, 0.25),
       [](const twinbench::Scenario& s) { return s.network().server_think_ms(); },
       [](twinbench::Scenario& s, double v) { s.mutable_network()->set_server_think_ms(v); }});
  p.push_back({"downlink_mbps",
               "bottleneck rate server -> client",
               {100, 150, 200, 300, 400, 500, 600, 800, 1000},
               [](const twinbench::Scenario& s) { return s.network().link().downlink_mbps(); },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_network()->mutable_link()->set_downlink_mbps(v);
               }});
  p.push_back({"http_request_worker_sleep_ms",
               "HTTPRequest worker sleep per iteration (Windows Sleep(1))", range(1, 3, 0.25),
               [](const twinbench::Scenario& s) {
                 return s.frame_loop().has_http_request_worker_sleep_ms()
                            ? s.frame_loop().http_request_worker_sleep_ms()
                            : 1.0;
               },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_frame_loop()->set_http_request_worker_sleep_ms(v);
               }});
  return p;
}

std::vector<CalibrationParameter> select_parameters(const std::string& names) {
  auto all = calibration_parameters();
  std::vector<CalibrationParameter> chosen;
  if (names.empty()) {
    std::copy_if(all.begin(), all.end(), std::back_inserter(chosen),
                 [](const auto& p) { return !p.only_when_named; });
    return chosen;
  }
  for (const auto& name : split_on(names, ',')) {
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
    if (it == all.end()) {
      std::vector<std::string> known;
      for (const auto& p : all) known.push_back(p.name);
      throw InputError(
          fmt::format("--params: expected one of {}, got '{}'", fmt::join(known, ","), name));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

namespace {

bool pattern_matches(const MeasuredCell& c, const std::string& pattern) {
  const auto parts = split_on(pattern, '/');
  const std::vector<std::string> values = {c.scenario, std::to_string(c.fps),
                                           std::to_string(c.body_bytes), c.variant};
  for (std::size_t i = 0; i < parts.size() && i < values.size(); ++i) {
    if (parts[i] != "*" && parts[i] != values[i]) return false;
  }
  return true;
}

}  // namespace

void check_cell_patterns(const std::string& patterns, const std::string& option) {
  const auto cells = published_cells();
  for (const auto& pattern : split_on(patterns, ',')) {
    if (pattern == "rest" && option == "--holdout") continue;
    if (split_on(pattern, '/').size() > 4 ||
        std::none_of(cells.begin(), cells.end(),
                     [&](const auto& c) { return pattern_matches(c, pattern); })) {
      throw InputError(
          fmt::format("{}: expected patterns scenario[/fps[/bytes[/variant]]] ('*' for any) "
                      "matching published cells, got '{}'",
                      option, pattern));
    }
  }
}

bool cell_matches(const MeasuredCell& c, const std::string& patterns) {
  const auto list = split_on(patterns, ',');
  return std::any_of(list.begin(), list.end(),
                     [&](const auto& p) { return pattern_matches(c, p); });
}

double calibration_loss(const Comparison& c) {
  double sum = 0;
  for (const auto& cell : c.cells) sum += std::min(std::abs(cell.error_pct()), 100.0);
  const double mean = c.cells.empty() ? 0 : sum / static_cast<double>(c.cells.size());
  return 1000.0 * static_cast<double>(c.cells.size() - c.within_goal()) + mean;
}

namespace {

// --starts NAME=V1,V2,...: the starting values of one fitted parameter.
struct Starts {
  std::optional<CalibrationParameter> param;
  std::vector<double> values;
};

Starts parse_starts(const std::string& text, const std::vector<CalibrationParameter>& params) {
  Starts starts;
  if (text.empty()) return starts;
  const auto eq = text.find('=');
  const std::string name = text.substr(0, eq);
  const auto it =
      std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == name; });
  if (eq == std::string::npos || it == params.end()) {
    throw InputError(fmt::format(
        "--starts: expected NAME=V1,V2,... with NAME a fitted parameter, got '{}'", text));
  }
  starts.param = *it;
  for (const auto& v : split_on(text.substr(eq + 1), ',')) {
    char* end = nullptr;
    const double value = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(value)) {
      throw InputError(fmt::format("--starts: '{}' is not a number", v));
    }
    starts.values.push_back(value);
  }
  return starts;
}

// The command that made a calibration, for its report and the fitted profile's header.
std::string command_line(const CalibrateOptions& a) {
  return fmt::format("twinbench calibrate --profile {} --fit {} --holdout {} --runs {}{}{}",
                     a.profile, a.fit, a.holdout, a.runs,
                     a.params.empty() ? "" : " --params " + a.params,
                     a.starts.empty() ? "" : " --starts " + a.starts);
}

std::string summary_line(const Comparison& c) {
  return fmt::format(
      "{} cells: {} within one frame, {} within max(1 frame, 5 %); median |error| {:.1f} %, max "
      "{:.1f} %",
      c.cells.size(), c.within_one_frame(), c.within_goal(), c.median_abs_pct(), c.max_abs_pct());
}

// One calibration: the fit and held-out cells, the parameters, and every evaluation made so far
// (a parameter vector is simulated once).
class Calibration {
 public:
  explicit Calibration(const CalibrateOptions& a) : a_(a) {
    check_cell_patterns(a.fit, "--fit");
    check_cell_patterns(a.holdout, "--holdout");
    start_ = load_profile(a.profile);
    params_ = select_parameters(a.params);
    starts_ = parse_starts(a.starts, params_);
    if (a.runs < 1) throw InputError("--runs: expected >= 1");
    for (auto& c : published_cells()) {
      if (cell_matches(c, a.fit)) {
        fit_.push_back(c);
      } else if (a.holdout == "rest" || cell_matches(c, a.holdout)) {
        holdout_.push_back(c);
      }
    }
  }

  // One descent from the profile, or one per --starts value (the descent only finds the nearest
  // minimum: two parameters that trade off, such as the RTT and the server's think time in a warm
  // ping, can hold it in a worse one). The lowest loss wins; the first on a tie.
  void search() {
    const auto t0 = std::chrono::steady_clock::now();
    best_loss_ = std::numeric_limits<double>::infinity();
    if (!starts_.param) {
      std::tie(best_, best_loss_) = descend(start_);
    } else {
      starts_report_ =
          fmt::format("| start `{}` | loss | fitted |\n|---:|---:|---|\n", starts_.param->name);
      for (double v : starts_.values) {
        twinbench::Scenario s = start_;
        starts_.param->set(s, v);
        if (!a_.quiet)
          std::cerr << fmt::format("start {} = {}\n", starts_.param->name, value_text(v));
        auto [fitted, loss] = descend(s);
        starts_report_ += fmt::format("| {} | {:.3f} | {}|\n", value_text(v), loss, key_of(fitted));
        if (loss < best_loss_ - 1e-9) best_ = fitted, best_loss_ = loss;
      }
    }
    sensitivity_ = sensitivity();
    search_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

  // The final figures with the published protocol (all runs); the report on stdout and the fitted
  // profile written.
  void finish() {
    fit_result_ =
        simulate_and_compare(fit_, best_, CompareOptions{a_.jobs, false, 0, std::nullopt});
    if (!holdout_.empty()) {
      holdout_result_ =
          simulate_and_compare(holdout_, best_, CompareOptions{a_.jobs, false, 0, std::nullopt});
    }
    fit_result_.profile = holdout_result_.profile = best_.name();
    fit_result_.profile_description = holdout_result_.profile_description = best_.description();
    std::cout << report();
    if (!holdout_.empty())
      std::cout << comparison_markdown(holdout_result_, "Held-out cells") << "\n";
    std::cout << comparison_markdown(fit_result_, "Fitted cells");
    const std::filesystem::path out(a_.out);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    scenario::write_file_atomically(out, fitted_profile());
    if (!a_.quiet) std::cerr << "wrote " << a_.out << "\n";
  }

 private:
  struct Evaluation {
    double loss;
    std::size_t within_goal;  // fit cells within max(1 frame, 5 %)
  };

  std::string key_of(const twinbench::Scenario& s) const {
    std::string key;
    for (const auto& p : params_) key += value_text(p.get(s)) + ";";
    return key;
  }

  Evaluation evaluate(const twinbench::Scenario& s) {
    const std::string key = key_of(s);
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    const Comparison c =
        simulate_and_compare(fit_, s, CompareOptions{a_.jobs, false, a_.runs, std::nullopt});
    const Evaluation e{calibration_loss(c), c.within_goal()};
    cache_[key] = e;
    if (!a_.quiet)
      std::cerr << fmt::format("  [{}] {}-> loss {:.3f}\n", cache_.size(), key, e.loss);
    return e;
  }

  // Coordinate descent from one starting point: each pass sets each parameter in turn to its best
  // grid value, the others held.
  std::pair<twinbench::Scenario, double> descend(twinbench::Scenario s) {
    double loss = evaluate(s).loss;
    for (unsigned pass = 0; pass < a_.passes; ++pass) {
      bool changed = false;
      for (const auto& p : params_) {
        const double current = p.get(s);
        double chosen = current, chosen_loss = loss;
        for (double v : p.grid) {
          twinbench::Scenario candidate = s;
          p.set(candidate, v);
          const double l = evaluate(candidate).loss;
          if (l < chosen_loss - 1e-9) chosen = v, chosen_loss = l;
        }
        if (chosen != current) {
          p.set(s, chosen);
          loss = chosen_loss;
          changed = true;
        }
        if (!a_.quiet)
          std::cerr << fmt::format("pass {}: {} = {} (loss {:.3f})\n", pass + 1, p.name,
                                   value_text(chosen), loss);
      }
      if (!changed) break;
    }
    return {s, loss};
  }

  // How sharp the minimum is: the fit set one grid step either side of each fitted value, the
  // others held. A neighbour as good as the fit marks a ridge the fit set cannot resolve.
  std::string sensitivity() {
    const auto cell_text = [&](const CalibrationParameter& p, std::size_t at) {
      if (at >= p.grid.size()) return std::string("—");
      twinbench::Scenario s = best_;
      p.set(s, p.grid[at]);
      const Evaluation e = evaluate(s);
      return fmt::format("{}: {}/{} (loss {:.3f})", value_text(p.grid[at]), e.within_goal,
                         fit_.size(), e.loss);
    };
    std::string rows;
    for (const auto& p : params_) {
      const double fitted = p.get(best_);
      const auto it = std::find_if(p.grid.begin(), p.grid.end(),
                                   [&](double v) { return std::abs(v - fitted) < 1e-9; });
      if (it == p.grid.end()) continue;  // a start value off the grid that the descent kept
      const auto at = static_cast<std::size_t>(it - p.grid.begin());
      rows += fmt::format("| `{}` | {} | {} | {} |\n", p.name, cell_text(p, at),
                          at == 0 ? std::string("—") : cell_text(p, at - 1), cell_text(p, at + 1));
    }
    return rows;
  }

  std::string report() const {
    std::string r =
        fmt::format("# Calibration of profile `{}`\n\n`{}`\n\n", start_.name(), command_line(a_));
    r += fmt::format(
        "Fitted on `{}` ({} cells, {} runs per cell during the search); held out: `{}` ({} cells). "
        "Coordinate descent over bounded grids, {} pass(es) at most, {} simulations, {:.0f} s.\n\n",
        a_.fit, fit_.size(), a_.runs, a_.holdout, holdout_.size(), a_.passes, cache_.size(),
        search_s_);
    if (!starts_report_.empty()) {
      r += fmt::format(
          "One descent per starting value of `{}` (`--starts {}`); the lowest fit-set loss "
          "wins:\n\n{}\n",
          starts_.param->name, a_.starts, starts_report_);
    }
    r += "| parameter | start | fitted | grid | stands for |\n|---|---:|---:|---|---|\n";
    for (const auto& p : params_) {
      r += fmt::format("| `{}` | {} | {} | {}..{} ({} values) | {} |\n", p.name,
                       value_text(p.get(start_)), value_text(p.get(best_)),
                       value_text(p.grid.front()), value_text(p.grid.back()), p.grid.size(),
                       p.source);
    }
    if (!sensitivity_.empty()) {
      r += fmt::format(
          "\nSensitivity: fit cells within max(1 frame, 5 %) with one parameter one grid step off "
          "its fitted value ({} "
          "runs per cell, as in the search):\n\n| parameter | fitted | one step down | one step up "
          "|\n|---|---|---|---|\n{}",
          a_.runs, sensitivity_);
    }
    r += fmt::format("\n**Fit set: {}.**\n\n", summary_line(fit_result_));
    if (!holdout_.empty()) r += fmt::format("**Held-out: {}.**\n\n", summary_line(holdout_result_));
    return r;
  }

  std::string fitted_profile() const {
    std::string header;
    for (const auto& p : params_) {
      header += fmt::format("#   {} = {} (start {}; grid {}..{})\n", p.name,
                            value_text(p.get(best_)), value_text(p.get(start_)),
                            value_text(p.grid.front()), value_text(p.grid.back()));
    }
    std::string text;
    google::protobuf::TextFormat::Printer printer;
    printer.PrintToString(best_, &text);
    return fmt::format(
        "# proto-file: scenario/proto/scenario.proto\n# proto-message: twinbench.Scenario\n#\n"
        "# Written by `{}`.\n"
        "# Fitted parameters:\n{}# Fit set: {}.\n# Held-out: {}.\n\n{}",
        command_line(a_), header, summary_line(fit_result_),
        holdout_.empty() ? std::string("none") : summary_line(holdout_result_), text);
  }

  const CalibrateOptions& a_;
  twinbench::Scenario start_, best_;
  std::vector<CalibrationParameter> params_;
  Starts starts_;
  std::vector<MeasuredCell> fit_, holdout_;
  std::map<std::string, Evaluation> cache_;  // parameter vector -> its evaluation
  double best_loss_ = 0, search_s_ = 0;
  std::string starts_report_, sensitivity_;
  Comparison fit_result_, holdout_result_;
};

}  // namespace

void calibrate(const CalibrateOptions& a) {
  Calibration calibration(a);
  calibration.search();
  calibration.finish();
}

}  // namespace tb::studies
