#include "commands.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "default_scenario.hpp"  // generated: scenarios/published/latency.textproto
#include "live_backend.hpp"
#include "sim_backend.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/load.hpp"
#include "twinbench/scenario/report.hpp"

namespace tb::app {

namespace {

struct RunArgs {
  std::string scenario;
  std::string backend = "sim";
  std::string server;
  std::string out;
  bool nodelay = false;
  std::uint64_t seed = 1;
  std::optional<std::uint32_t> runs, warmups;
  bool quiet = false;
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
};

// One status line on stderr, rewritten in place on a terminal, every few percent otherwise.
class Progress {
 public:
  Progress() : tty_(isatty(STDERR_FILENO) == 1) {}
  void update(const twinbench::Sample& s, std::size_t done, std::size_t total) {
    const int percent = static_cast<int>(100 * done / total);
    if (!tty_ && percent / 10 == last_decile_ && done != total) return;
    last_decile_ = percent / 10;
    std::cerr << fmt::format("{}[{:3d}%] {}/{} {} fps={} bytes={} {}: {:.1f} ms, {} frames{}{}",
                             tty_ ? "\r\033[K" : "", percent, done, total, s.scenario(), s.fps(),
                             s.body_bytes(), s.variant(), s.elapsed_ms(), s.frames(),
                             s.result() == "success" ? "" : " (" + s.result() + ": " + s.error() + ")",
                             tty_ && done != total ? "" : "\n");
  }

 private:
  bool tty_;
  int last_decile_ = -1;
};

std::optional<twinbench::ResultSet> simulate(const twinbench::Scenario& scenario,
                                             const runner::RunOptions& options, const RunArgs& a) {
  try {
    return run_simulated(scenario, options, a.jobs);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return std::nullopt;
  }
}

// Writes the result files and prints the report; nothing is written for a failed run.
int finish_run(std::optional<twinbench::ResultSet> results, const std::string& out, bool quiet) {
  if (!results) return 1;
  try {
    scenario::write_results(*results, out);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::cout << scenario::results_markdown(*results);
  if (!quiet) std::cerr << "wrote " << out << "/results.{json,csv,md}\n";
  return 0;
}

int run_command(const RunArgs& a) {
  twinbench::Scenario scenario;
  try {
    scenario = a.scenario.empty() ? scenario::parse_scenario(kDefaultScenario, kDefaultScenarioName)
                                  : scenario::load_scenario(a.scenario);
    if (a.runs) scenario.set_runs(*a.runs);
    if (a.warmups) scenario.set_warmups(*a.warmups);
    const std::string origin = a.scenario.empty() ? kDefaultScenarioName : a.scenario;
    scenario::validate_scenario(scenario, origin);
    if (a.backend == "sim") require_simulatable(scenario, origin);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const std::string out = a.out.empty() ? "out/" + scenario.name() + "-" + a.backend : a.out;
  Progress progress;
  runner::RunOptions options;
  options.seed = a.seed;
  if (!a.quiet) {
    options.on_sample = [&](const twinbench::Sample& s, std::size_t done, std::size_t total) {
      progress.update(s, done, total);
    };
  }
  if (a.backend == "sim") return finish_run(simulate(scenario, options, a), out, a.quiet);

  std::optional<live::LiveServer> own_server;
  std::string base_url = a.server.empty() ? scenario.target().base_url() : a.server;
  if (base_url.empty()) {
    live::ServerOptions options;
    options.nodelay = a.nodelay;
    own_server.emplace(options);
    own_server->start();
    base_url = own_server->base_url();
    if (!a.quiet) std::cerr << "serving on " << base_url << " (loopback, Nagle " << (a.nodelay ? "off" : "on") << ")\n";
  }

  LiveBackend live;
  options.base_url = base_url;
  options.server_nodelay = a.nodelay;
  std::optional<twinbench::ResultSet> results;
  try {
    results = runner::run_scenario(scenario, live.backend(), options);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  }
  if (own_server && !a.quiet) {
    const auto st = own_server->stats();
    std::cerr << fmt::format("server: {} connections, {} requests\n", st.connections_accepted, st.requests_served);
  }
  return finish_run(std::move(results), out, a.quiet);
}

int serve_command(const live::ServerOptions& options) {
  try {
    live::LiveServer server(options);
    std::cerr << "twinbench serve: listening on " << server.base_url() << " (Nagle "
              << (options.nodelay ? "off" : "on") << "); Ctrl-C stops\n";
    server.run_foreground();
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main_with_args(const std::vector<std::string>& args) {
  CLI::App app{"twinbench: HTTP clients in a frame loop, over real sockets or a simulated link"};
  app.require_subcommand(1);

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run a scenario and write results.json, results.csv, results.md");
  run_cmd->add_option("scenario", run.scenario,
                      "Scenario textproto file (default: the published latency scenario, built in)");
  run_cmd->add_option("--backend", run.backend, "live (real sockets) or sim (ns-3 simulated network)")
      ->check(CLI::IsMember({"live", "sim"}));
  run_cmd->add_option("--server", run.server, "Base URL of a server to measure; default: start one on loopback");
  run_cmd->add_option("--out", run.out, "Output directory (default out/<scenario>-<backend>)");
  run_cmd->add_flag("--nodelay", run.nodelay, "Set TCP_NODELAY on the server this command starts");
  run_cmd->add_option("--seed", run.seed, "Seed of the simulation's randomness (loss, jitter)");
  run_cmd->add_option("--jobs,-j", run.jobs, "Simulations run at once (default: all cores)")
      ->check(CLI::Range(1u, 256u));
  run_cmd->add_option("--runs", run.runs, "Override the scenario's measured rounds");
  run_cmd->add_option("--warmups", run.warmups, "Override the scenario's warmup rounds");
  run_cmd->add_flag("--quiet,-q", run.quiet, "No progress on stderr");

  live::ServerOptions serve;
  serve.port = 8927;
  auto* serve_cmd = app.add_subcommand("serve", "Serve the benchmark endpoints (HTTP/1.1 keep-alive)");
  serve_cmd->add_option("--bind", serve.bind_address, "Address to bind");
  serve_cmd->add_option("--port", serve.port, "Port (0 = any free port)");
  serve_cmd->add_flag("--nodelay", serve.nodelay, "Disable Nagle (TCP_NODELAY) on accepted sockets");

  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*run_cmd) return run_command(run);
  return serve_command(serve);
}

}  // namespace tb::app
