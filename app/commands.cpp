#include "commands.hpp"

#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "twinbench/studies/calibrate.hpp"
#include "twinbench/studies/embedded.hpp"
#include "twinbench/emulated/emulated_run.hpp"
#include "study_options.hpp"
#include "twinbench/studies/twin_compare.hpp"
#include "twinbench/live/live_backend.hpp"
#include "twinbench/studies/reproduce.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/studies/sweep.hpp"
#include "twinbench/runner/tls_setup.hpp"
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
  bool tls = false;     // HTTPS even if the scenario has no tls section
  std::string profile;  // network profile laid over the scenario (reproduce's --profile)
  std::string pcap;     // sim: directory of packet captures
  bool whole_run = false;  // sim: no split into worlds per variant (docs/architecture.md)
  std::string tls_ca;   // PEM file of the roots to trust for an external --server
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
    return sim::run_simulated(scenario, options, a.jobs, a.pcap, a.whole_run);
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
    const auto& builtin = studies::embedded::published_latency;
    scenario = a.scenario.empty() ? scenario::parse_scenario(builtin.text, builtin.path)
                                  : scenario::load_scenario(a.scenario);
    if (a.runs) scenario.set_runs(*a.runs);
    if (a.warmups) scenario.set_warmups(*a.warmups);
    if (!a.profile.empty()) studies::apply_profile(scenario, studies::load_profile(a.profile));
    if (a.tls) scenario.mutable_tls();
    const std::string origin = a.scenario.empty() ? builtin.path : a.scenario;
    if (!a.pcap.empty() && a.backend == "live") throw std::invalid_argument("--pcap: only with --backend sim or emulated");
    if (a.whole_run && a.backend != "sim") throw std::invalid_argument("--whole-run: only with --backend sim");
    scenario::validate_scenario(scenario, origin);
    if (a.backend != "live") sim::require_simulatable(scenario, origin);
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
  if (a.backend == "emulated") {
    std::optional<twinbench::ResultSet> results;
    try {
      results = emulated::run_emulated(scenario, options, a.nodelay, a.pcap);
    } catch (const emulated::PathUnavailable& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
    }
    if (results && !a.quiet) {
      const auto& path = results->run().emulated();
      std::cerr << fmt::format("emulated path: {} packets, lateness p50 {:.0f} us, p99 {:.0f} us (limit {:.0f}){}\n",
                               path.packets(), path.lateness_p50_us(), path.lateness_p99_us(),
                               path.lateness_limit_us(), path.valid() ? "" : ": INVALID, " + path.invalid_reason());
    }
    return finish_run(std::move(results), out, a.quiet);
  }

  std::optional<live::LiveServer> own_server;
  std::string base_url = a.server.empty() ? scenario.target().base_url() : a.server;
  if (base_url.empty()) {
    live::ServerOptions server_options;
    server_options.nodelay = a.nodelay;
    if (runner::uses_tls(scenario)) {
      try {
        runner::TlsSetup tls = runner::make_tls_setup(scenario, {"127.0.0.1", "localhost"});
        server_options.tls = tls.server;
        options.tls = tls.client;
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 1;
      }
    }
    own_server.emplace(server_options);
    own_server->start();
    base_url = own_server->base_url();
    if (!a.quiet) std::cerr << "serving on " << base_url << " (loopback, Nagle " << (a.nodelay ? "off" : "on") << ")\n";
  } else if (base_url.starts_with("https://")) {
    std::string ca;
    if (!a.tls_ca.empty()) {
      std::ifstream in(a.tls_ca);
      if (!in) {
        std::cerr << "error: cannot read --tls-ca " << a.tls_ca << "\n";
        return 2;
      }
      ca.assign(std::istreambuf_iterator<char>(in), {});
    }
    options.tls = runner::client_tls_config(scenario, ca);
  }

  live::LiveBackend live;
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

struct ReproduceArgs {
  std::string measured;  // validate only
  std::string profile = "lightsail-2026";
  std::string out = "out/reproduction";
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  bool quiet = false;
  std::uint32_t runs = 0;  // measured rounds per cell; 0: the published protocol's
};

// `reproduce` (the published run) and `validate` (a measured file) against the model.
int compare_command(const ReproduceArgs& a, bool published) {
  std::vector<studies::MeasuredCell> measured;
  twinbench::Scenario profile;
  try {
    measured = published ? studies::published_cells() : studies::load_measured_csv(a.measured);
    profile = studies::load_profile(a.profile);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  std::string title = published ? "The published Lightsail run, reproduced in simulation"
                                : "Validation of " + a.measured + " against the model";
  if (a.runs) title += fmt::format(" ({} measured rounds per cell, not the protocol's)", a.runs);
  try {
    studies::Comparison comparison = studies::simulate_and_compare(measured, profile, studies::CompareOptions{a.jobs, !a.quiet, a.runs, std::nullopt});
    if (!published) comparison.reference = "measured";
    studies::write_comparison(comparison, a.out, title);
    std::cout << studies::comparison_markdown(comparison, title);
    if (!a.quiet) std::cerr << "wrote " << a.out << "/reproduction.{csv,md,png,svg}\n";
  } catch (const scenario::ScenarioError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return published ? 1 : 2;
  }
  return 0;
}

struct ServeTlsArgs {
  bool enabled = false;
  std::string key_type = "rsa2048";
  std::uint32_t intermediates = 0;
  std::string ca_out;  // where to write the root certificate; empty: print it on stdout
};

int serve_command(live::ServerOptions options, const ServeTlsArgs& tls) {
  try {
    if (tls.enabled) {
      server::CertProfile profile;
      for (auto k : {server::KeyType::kRsa2048, server::KeyType::kRsa4096, server::KeyType::kEd25519,
                     server::KeyType::kEcdsaP256})
        if (tls.key_type == server::to_string(k)) profile.key_type = k;
      profile.intermediates = tls.intermediates;
      profile.names = {options.bind_address, "localhost", "127.0.0.1"};
      const auto credentials = server::make_credentials(profile);
      options.tls = std::make_shared<const server::TlsServerContext>(
          server::TlsServerConfig{credentials.chain_pem, credentials.key_pem});
      if (tls.ca_out.empty()) {
        std::cout << credentials.ca_pem << std::flush;
      } else {
        std::ofstream(tls.ca_out) << credentials.ca_pem;
        std::cerr << "twinbench serve: wrote the root CA to " << tls.ca_out << "\n";
      }
    }
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
  run_cmd->add_option("--backend", run.backend, "sim (ns-3 simulated network), emulated (real kernel TCP through an emulated link; "
                 "needs CAP_NET_ADMIN) or live (real sockets to a server)")
      ->check(CLI::IsMember({"live", "sim", "emulated"}));
  run_cmd->add_option("--server", run.server, "Base URL of a server to measure; default: start one on loopback");
  run_cmd->add_option("--out", run.out, "Output directory (default out/<scenario>-<backend>)");
  run_cmd->add_flag("--nodelay", run.nodelay, "Set TCP_NODELAY on the server this command starts");
  run_cmd->add_option("--seed", run.seed, "Seed of the simulation's randomness (loss, jitter)");
  run_cmd->add_option("--jobs,-j", run.jobs, "Simulations run at once (default: all cores)")
      ->check(CLI::Range(1u, 256u));
  run_cmd->add_option("--runs", run.runs, "Override the scenario's measured rounds");
  run_cmd->add_option("--warmups", run.warmups, "Override the scenario's warmup rounds");
  run_cmd->add_flag("--quiet,-q", run.quiet, "No progress on stderr");
  run_cmd->add_flag("--tls", run.tls, "HTTPS (the scenario's tls section, or its defaults)");
  run_cmd->add_option("--profile", run.profile,
                      "Network profile laid over the scenario: built-in name (lightsail-2026) or textproto file");
  run_cmd->add_option("--pcap", run.pcap, "sim, emulated: write packet captures of both hosts into this directory");
  run_cmd->add_flag("--whole-run", run.whole_run,
                    "sim: simulate the interleaved run as one simulation per Session scope, not split into "
                    "worlds per variant (slower; to check the split on a scenario)");
  run_cmd->add_option("--tls-ca", run.tls_ca, "PEM file of the roots to trust for an https --server");

  live::ServerOptions serve;
  serve.port = 8927;
  auto* serve_cmd = app.add_subcommand("serve", "Serve the benchmark endpoints (HTTP/1.1 keep-alive)");
  serve_cmd->add_option("--bind", serve.bind_address, "Address to bind");
  serve_cmd->add_option("--port", serve.port, "Port (0 = any free port)");
  serve_cmd->add_flag("--nodelay", serve.nodelay, "Disable Nagle (TCP_NODELAY) on accepted sockets");
  ServeTlsArgs serve_tls;
  serve_cmd->add_flag("--tls", serve_tls.enabled, "HTTPS with generated test certificates (TLS 1.2 and 1.3)");
  serve_cmd->add_option("--tls-key-type", serve_tls.key_type, "Key type of the certificates")
      ->check(CLI::IsMember({"rsa2048", "rsa4096", "ed25519", "ecdsa-p256"}))
      ->capture_default_str();
  serve_cmd->add_option("--tls-intermediates", serve_tls.intermediates, "Intermediate CAs in the chain sent")
      ->check(CLI::Range(0u, 16u));
  serve_cmd->add_option("--tls-ca-out", serve_tls.ca_out, "Write the root CA here (default: print it on stdout)");

  ReproduceArgs reproduce;
  auto* reproduce_cmd = app.add_subcommand(
      "reproduce", "Simulate the published run's three scenarios and compare them with its numbers, cell by cell");
  reproduce_cmd->add_option("--out", reproduce.out, "Output directory")->capture_default_str();
  reproduce_cmd->add_option("--profile", reproduce.profile, "Network profile: built-in name or textproto file")
      ->capture_default_str();
  reproduce_cmd->add_option("--jobs,-j", reproduce.jobs, "Simulations run at once")->check(CLI::Range(1u, 256u));
  reproduce_cmd->add_flag("--quiet,-q", reproduce.quiet, "No progress on stderr");
  reproduce_cmd->add_option("--runs", reproduce.runs,
                            "Measured rounds per cell instead of the published 25 (quicker; said in the report)");

  ReproduceArgs validate;
  validate.out = "out/validation";
  auto* validate_cmd = app.add_subcommand(
      "validate", "Compare measured medians (reference CSV format or a results.csv) with the model");
  validate_cmd->add_option("measured", validate.measured, "CSV file of measured cells")->required();
  validate_cmd->add_option("--profile", validate.profile, "Network profile: built-in name or textproto file")
      ->capture_default_str();
  validate_cmd->add_option("--out", validate.out, "Output directory")->capture_default_str();
  validate_cmd->add_option("--jobs,-j", validate.jobs, "Simulations run at once")->check(CLI::Range(1u, 256u));
  validate_cmd->add_flag("--quiet,-q", validate.quiet, "No progress on stderr");
  validate_cmd->add_option("--runs", validate.runs, "Measured rounds per cell instead of the protocol's (quicker; said in the report)");

  studies::TwinCompareArgs twin_compare;
  auto* compare_cmd = add_twin_compare_subcommand(app, twin_compare);

  studies::CalibrateArgs calibrate;
  calibrate.jobs = std::max(1u, std::thread::hardware_concurrency());
  auto* calibrate_cmd = app.add_subcommand(
      "calibrate", "Fit a profile's global parameters on some published cells; report the held-out cells");
  calibrate_cmd->add_option("--profile", calibrate.profile, "Starting profile: built-in name or textproto file")
      ->capture_default_str();
  calibrate_cmd->add_option("--fit", calibrate.fit, "Cells fitted: scenario[/fps[/bytes[/variant]]],... ('*' any)")
      ->capture_default_str();
  calibrate_cmd->add_option("--holdout", calibrate.holdout, "Cells reported, not fitted: patterns, or rest")
      ->capture_default_str();
  calibrate_cmd->add_option("--params", calibrate.params, "Parameters fitted, comma-separated (default: all)");
  calibrate_cmd->add_option("--starts", calibrate.starts,
                            "NAME=V1,V2,...: one descent per starting value of a fitted parameter; the best wins");
  calibrate_cmd->add_option("--runs", calibrate.runs, "Measured rounds per cell during the search")
      ->capture_default_str();
  calibrate_cmd->add_option("--passes", calibrate.passes, "Coordinate-descent passes at most")->capture_default_str();
  calibrate_cmd->add_option("--out", calibrate.out, "The fitted profile (textproto)")->capture_default_str();
  calibrate_cmd->add_option("--jobs,-j", calibrate.jobs, "Simulations run at once")->check(CLI::Range(1u, 256u));
  calibrate_cmd->add_flag("--quiet,-q", calibrate.quiet, "No progress on stderr");

  studies::SweepArgs sweep;
  auto* sweep_cmd = add_sweep_subcommand(app, sweep);
  studies::MergeArgs merge;
  auto* merge_cmd = add_merge_subcommand(app, merge);

  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*run_cmd) return run_command(run);
  if (*compare_cmd) return studies::twin_compare_command(twin_compare);
  if (*sweep_cmd) return studies::sweep_command(sweep);
  if (*merge_cmd) return studies::merge_command(merge);
  if (*reproduce_cmd) return compare_command(reproduce, /*published=*/true);
  if (*validate_cmd) return compare_command(validate, /*published=*/false);
  if (*calibrate_cmd) return studies::calibrate_command(calibrate);
  return serve_command(serve, serve_tls);
}

}  // namespace tb::app
