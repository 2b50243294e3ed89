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

#include "twinbench/scenario/load.hpp"
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

std::vector<std::string> split_on(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto at = text.find(sep, start);
    parts.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::string value_text(double v) { return fmt::format("{:g}", v); }

}  // namespace

std::vector<CalibrationParameter> calibration_parameters() {
  std::vector<CalibrationParameter> p;
  p.push_back({"tls_max_version", "highest TLS version both sides allow (1.2 or 1.3)", {1.2, 1.3},
               [](const twinbench::Scenario& s) { return s.tls().max_version() == twinbench::TLS1_2 ? 1.2 : 1.3; },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_tls()->set_max_version(v < 1.25 ? twinbench::TLS1_2 : twinbench::TLS1_3);
               }});
  p.push_back({"handshake_cpu_ms", "server CPU time before its first handshake flight", range(0, 40, 1),
               [](const twinbench::Scenario& s) { return s.tls().handshake_cpu_ms(); },
               [](twinbench::Scenario& s, double v) { s.mutable_tls()->set_handshake_cpu_ms(v); }});
  // Bounded to what Linux does: a delayed ACK waits TCP_ATO_MIN (40 ms) and fires from a timer
  // with some slack (40-48 ms measured on Linux 6.18, docs/tcp-model.md); lower values would
  // stand for something else.
  p.push_back({"server_delayed_ack_ms", "the server's delayed-ACK timeout: Linux's TCP_ATO_MIN (40 ms) plus timer slack (40-48 ms measured)",
               range(40, 48, 1),
               [](const twinbench::Scenario& s) {
                 return s.network().server_tcp().has_delayed_ack_ms() ? s.network().server_tcp().delayed_ack_ms() : 40.0;
               },
               [](twinbench::Scenario& s, double v) { s.mutable_network()->mutable_server_tcp()->set_delayed_ack_ms(v); }});
  p.push_back({"rtt_ms", "base RTT of the path, split evenly between the two one-way delays", range(20, 40, 0.5),
               [](const twinbench::Scenario& s) {
                 return s.network().link().client_to_server_delay_ms() + s.network().link().server_to_client_delay_ms();
               },
               [](twinbench::Scenario& s, double v) {
                 s.mutable_network()->mutable_link()->set_client_to_server_delay_ms(v / 2);
                 s.mutable_network()->mutable_link()->set_server_to_client_delay_ms(v / 2);
               }});
  p.push_back({"jitter_ms", "extra one-way delay per packet, uniform in [0, jitter] each way, order kept",
               range(0, 4, 0.25), [](const twinbench::Scenario& s) { return s.network().link().jitter_ms(); },
               [](twinbench::Scenario& s, double v) { s.mutable_network()->mutable_link()->set_jitter_ms(v); },
               /*only_when_named=*/true});
  p.push_back({"server_think_ms", "server time from a complete request to the response (Nginx -> Daphne -> Django)",
               range(0, 10, 0.25), [](const twinbench::Scenario& s) { return s.network().server_think_ms(); },
               [](twinbench::Scenario& s, double v) { s.mutable_network()->set_server_think_ms(v); }});
  p.push_back({"downlink_mbps", "bottleneck rate server -> client", {100, 150, 200, 300, 400, 500, 600, 800, 1000},
               [](const twinbench::Scenario& s) { return s.network().link().downlink_mbps(); },
               [](twinbench::Scenario& s, double v) { s.mutable_network()->mutable_link()->set_downlink_mbps(v); }});
  p.push_back({"http_request_worker_sleep_ms", "HTTPRequest worker sleep per iteration (Windows Sleep(1))",
               range(1, 3, 0.25),
               [](const twinbench::Scenario& s) {
                 return s.frame_loop().has_http_request_worker_sleep_ms() ? s.frame_loop().http_request_worker_sleep_ms()
                                                                         : 1.0;
               },
               [](twinbench::Scenario& s, double v) { s.mutable_frame_loop()->set_http_request_worker_sleep_ms(v); }});
  return p;
}

std::vector<CalibrationParameter> select_parameters(const std::string& names) {
  auto all = calibration_parameters();
  std::vector<CalibrationParameter> chosen;
  if (names.empty()) {
    std::copy_if(all.begin(), all.end(), std::back_inserter(chosen), [](const auto& p) { return !p.only_when_named; });
    return chosen;
  }
  for (const auto& name : split_on(names, ',')) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const auto& p) { return p.name == name; });
    if (it == all.end()) {
      std::vector<std::string> known;
      for (const auto& p : all) known.push_back(p.name);
      throw std::runtime_error(fmt::format("--params: expected one of {}, got '{}'", fmt::join(known, ","), name));
    }
    chosen.push_back(*it);
  }
  return chosen;
}

namespace {

bool pattern_matches(const MeasuredCell& c, const std::string& pattern) {
  const auto parts = split_on(pattern, '/');
  const std::vector<std::string> values = {c.scenario, std::to_string(c.fps), std::to_string(c.body_bytes), c.variant};
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
        std::none_of(cells.begin(), cells.end(), [&](const auto& c) { return pattern_matches(c, pattern); })) {
      throw std::runtime_error(fmt::format(
          "{}: expected patterns scenario[/fps[/bytes[/variant]]] ('*' for any) matching published cells, got '{}'",
          option, pattern));
    }
  }
}

bool cell_matches(const MeasuredCell& c, const std::string& patterns) {
  const auto list = split_on(patterns, ',');
  return std::any_of(list.begin(), list.end(), [&](const auto& p) { return pattern_matches(c, p); });
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
  const auto it = std::find_if(params.begin(), params.end(), [&](const auto& p) { return p.name == name; });
  if (eq == std::string::npos || it == params.end()) {
    throw std::runtime_error(fmt::format("--starts: expected NAME=V1,V2,... with NAME a fitted parameter, got '{}'", text));
  }
  starts.param = *it;
  for (const auto& v : split_on(text.substr(eq + 1), ',')) {
    char* end = nullptr;
    const double value = std::strtod(v.c_str(), &end);
    if (v.empty() || *end != '\0' || !std::isfinite(value)) {
      throw std::runtime_error(fmt::format("--starts: '{}' is not a number", v));
    }
    starts.values.push_back(value);
  }
  return starts;
}

// The command that made a calibration, for its report and the fitted profile's header.
std::string command_line(const CalibrateArgs& a) {
  return fmt::format("twinbench calibrate --profile {} --fit {} --holdout {} --runs {}{}{}", a.profile, a.fit, a.holdout,
                     a.runs, a.params.empty() ? "" : " --params " + a.params, a.starts.empty() ? "" : " --starts " + a.starts);
}

std::string summary_line(const Comparison& c) {
  return fmt::format("{} cells: {} within one frame, {} within max(1 frame, 5 %); median |error| {:.1f} %, max {:.1f} %",
                     c.cells.size(), c.within_one_frame(), c.within_goal(), c.median_abs_pct(), c.max_abs_pct());
}

}  // namespace

int calibrate_command(const CalibrateArgs& a) {
  twinbench::Scenario start;
  std::vector<CalibrationParameter> params;
  Starts starts;
  std::vector<MeasuredCell> fit, holdout;
  try {
    check_cell_patterns(a.fit, "--fit");
    check_cell_patterns(a.holdout, "--holdout");
    start = load_profile(a.profile);
    params = select_parameters(a.params);
    starts = parse_starts(a.starts, params);
    if (a.runs < 1) throw std::runtime_error("--runs: expected >= 1");
    for (auto& c : published_cells()) {
      if (cell_matches(c, a.fit)) {
        fit.push_back(c);
      } else if (a.holdout == "rest" || cell_matches(c, a.holdout)) {
        holdout.push_back(c);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  CompareOptions search{a.jobs, false, a.runs, std::nullopt};
  struct Evaluation {
    double loss;
    std::size_t within_goal;  // fit cells within max(1 frame, 5 %)
  };
  std::map<std::string, Evaluation> cache;  // parameter vector -> its evaluation
  std::size_t evaluations = 0;
  auto key_of = [&](const twinbench::Scenario& s) {
    std::string key;
    for (const auto& p : params) key += value_text(p.get(s)) + ";";
    return key;
  };
  auto evaluate = [&](const twinbench::Scenario& s) {
    const std::string key = key_of(s);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
    const Comparison c = simulate_and_compare(fit, s, search);
    const Evaluation e{calibration_loss(c), c.within_goal()};
    ++evaluations;
    cache[key] = e;
    if (!a.quiet) std::cerr << fmt::format("  [{}] {}-> loss {:.3f}\n", evaluations, key, e.loss);
    return e;
  };
  auto loss_of = [&](const twinbench::Scenario& s) { return evaluate(s).loss; };

  // Coordinate descent from one starting point: each pass sets each parameter in turn to its best
  // grid value, the others held.
  auto descend = [&](twinbench::Scenario s) {
    double loss = loss_of(s);
    for (unsigned pass = 0; pass < a.passes; ++pass) {
      bool changed = false;
      for (const auto& p : params) {
        const double current = p.get(s);
        double chosen = current, chosen_loss = loss;
        for (double v : p.grid) {
          twinbench::Scenario candidate = s;
          p.set(candidate, v);
          const double l = loss_of(candidate);
          if (l < chosen_loss - 1e-9) chosen = v, chosen_loss = l;
        }
        if (chosen != current) {
          p.set(s, chosen);
          loss = chosen_loss;
          changed = true;
        }
        if (!a.quiet) std::cerr << fmt::format("pass {}: {} = {} (loss {:.3f})\n", pass + 1, p.name, value_text(chosen), loss);
      }
      if (!changed) break;
    }
    return std::pair{s, loss};
  };

  // One descent from the profile, or one per --starts value (the descent only finds the nearest
  // minimum: two parameters that trade off, such as the RTT and the server's think time in a warm
  // ping, can hold it in a worse one). The lowest loss wins; the first on a tie.
  twinbench::Scenario best = start;
  double best_loss = std::numeric_limits<double>::infinity();
  std::string starts_report;
  try {
    if (!starts.param) {
      std::tie(best, best_loss) = descend(start);
    } else {
      starts_report = fmt::format("| start `{}` | loss | fitted |\n|---:|---:|---|\n", starts.param->name);
      for (double v : starts.values) {
        twinbench::Scenario s = start;
        starts.param->set(s, v);
        if (!a.quiet) std::cerr << fmt::format("start {} = {}\n", starts.param->name, value_text(v));
        auto [fitted, loss] = descend(s);
        starts_report += fmt::format("| {} | {:.3f} | {}|\n", value_text(v), loss, key_of(fitted));
        if (loss < best_loss - 1e-9) best = fitted, best_loss = loss;
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  // How sharp the minimum is: the fit set one grid step either side of each fitted value, the
  // others held. A neighbour as good as the fit marks a ridge the fit set cannot resolve.
  std::string sensitivity;
  try {
    const auto cell_text = [&](const CalibrationParameter& p, std::size_t at) {
      if (at >= p.grid.size()) return std::string("—");
      twinbench::Scenario s = best;
      p.set(s, p.grid[at]);
      const Evaluation e = evaluate(s);
      return fmt::format("{}: {}/{} (loss {:.3f})", value_text(p.grid[at]), e.within_goal, fit.size(), e.loss);
    };
    for (const auto& p : params) {
      const double fitted = p.get(best);
      const auto it = std::find_if(p.grid.begin(), p.grid.end(), [&](double v) { return std::abs(v - fitted) < 1e-9; });
      if (it == p.grid.end()) continue;  // a start value off the grid that the descent kept
      const auto at = static_cast<std::size_t>(it - p.grid.begin());
      sensitivity += fmt::format("| `{}` | {} | {} | {} |\n", p.name, cell_text(p, at),
                                 at == 0 ? std::string("—") : cell_text(p, at - 1), cell_text(p, at + 1));
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  const double search_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // The final figures with the published protocol (all runs).
  Comparison fit_result, holdout_result;
  try {
    fit_result = simulate_and_compare(fit, best, CompareOptions{a.jobs, false, 0, std::nullopt});
    if (!holdout.empty()) holdout_result = simulate_and_compare(holdout, best, CompareOptions{a.jobs, false, 0, std::nullopt});
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  fit_result.profile = holdout_result.profile = best.name();
  fit_result.profile_description = holdout_result.profile_description = best.description();

  std::string report = fmt::format("# Calibration of profile `{}`\n\n", start.name());
  report += fmt::format("`{}`\n\n", command_line(a));
  report += fmt::format("Fitted on `{}` ({} cells, {} runs per cell during the search); held out: `{}` ({} cells). "
                        "Coordinate descent over bounded grids, {} pass(es) at most, {} simulations, {:.0f} s.\n\n",
                        a.fit, fit.size(), a.runs, a.holdout, holdout.size(), a.passes, evaluations, search_s);
  if (!starts_report.empty()) {
    report += fmt::format("One descent per starting value of `{}` (`--starts {}`); the lowest fit-set loss wins:\n\n{}\n",
                          starts.param->name, a.starts, starts_report);
  }
  report += "| parameter | start | fitted | grid | stands for |\n|---|---:|---:|---|---|\n";
  std::string header;
  for (const auto& p : params) {
    report += fmt::format("| `{}` | {} | {} | {}..{} ({} values) | {} |\n", p.name, value_text(p.get(start)),
                          value_text(p.get(best)), value_text(p.grid.front()), value_text(p.grid.back()), p.grid.size(),
                          p.source);
    header += fmt::format("#   {} = {} (start {}; grid {}..{})\n", p.name, value_text(p.get(best)), value_text(p.get(start)),
                          value_text(p.grid.front()), value_text(p.grid.back()));
  }
  if (!sensitivity.empty()) {
    report += fmt::format(
        "\nSensitivity: fit cells within max(1 frame, 5 %) with one parameter one grid step off its fitted value ({} "
        "runs per cell, as in the search):\n\n| parameter | fitted | one step down | one step up |\n|---|---|---|---|\n{}",
        a.runs, sensitivity);
  }
  report += fmt::format("\n**Fit set: {}.**\n\n", summary_line(fit_result));
  if (!holdout.empty()) report += fmt::format("**Held-out: {}.**\n\n", summary_line(holdout_result));
  std::cout << report;
  if (!holdout.empty()) std::cout << comparison_markdown(holdout_result, "Held-out cells") << "\n";
  std::cout << comparison_markdown(fit_result, "Fitted cells");

  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(best, &text);
  const std::string file = fmt::format(
      "# proto-file: scenario/proto/scenario.proto\n# proto-message: twinbench.Scenario\n#\n"
      "# Written by `{}`.\n"
      "# Fitted parameters:\n{}# Fit set: {}.\n# Held-out: {}.\n\n{}",
      command_line(a), header, summary_line(fit_result),
      holdout.empty() ? std::string("none") : summary_line(holdout_result), text);
  try {
    const std::filesystem::path out(a.out);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    scenario::write_file_atomically(out, file);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  if (!a.quiet) std::cerr << "wrote " << a.out << "\n";
  return 0;
}

}  // namespace tb::studies
