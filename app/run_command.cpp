// `twinbench run`: one scenario on one backend (sim, emulated or live), results written.
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "twinbench/emulated/emulated_run.hpp"
#include "twinbench/live/live_backend.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/runner/progress.hpp"
#include "twinbench/runner/tls_setup.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/profile.hpp"
#include "twinbench/scenario/report.hpp"
#include "twinbench/scenario/text.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_backend.hpp"
#include "twinbench/studies/embedded.hpp"
#include "twinbench/studies/reproduce.hpp"
#include "twinbench/verdicts/expectations.hpp"
#include "twinbench/verdicts/junit.hpp"
#include "twinbench/verdicts/result_diff.hpp"

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
  unsigned jobs = all_cores();
  bool tls = false;        // HTTPS even if the scenario has no tls section
  std::string profile;     // network profile laid over the scenario (reproduce's --profile)
  std::string pcap;        // sim, emulated: directory of packet captures
  bool whole_run = false;  // sim: no split into simulations per variant (docs/architecture.md)
  std::string tls_ca;      // PEM file of the roots to trust for an external --server
  std::string baseline;    // results to diff against (a run's --out, or its results.json)
  verdicts::Tolerance tolerance;
  std::string junit;       // JUnit XML of the expectations and the baseline diff
};

// The scenario as the options make it, validated for the backend; bad input throws InputError.
twinbench::Scenario load_run_scenario(const RunArgs& a) {
  const auto& builtin = studies::embedded::published_latency;
  twinbench::Scenario scenario = a.scenario.empty()
                                     ? scenario::parse_scenario(builtin.text, builtin.path)
                                     : scenario::load_scenario(a.scenario);
  if (!a.profile.empty()) {
    const std::string text =
        a.scenario.empty() ? std::string(builtin.text) : *scenario::read_file(a.scenario);
    scenario = scenario::scenario_under_profile(text, a.scenario.empty() ? builtin.path : a.scenario,
                                                studies::load_profile(a.profile));
  }
  if (a.runs) scenario.set_runs(*a.runs);
  if (a.warmups) scenario.set_warmups(*a.warmups);
  if (a.tls) scenario.mutable_tls();
  const std::string origin = a.scenario.empty() ? builtin.path : a.scenario;
  if (!a.pcap.empty() && a.backend == "live")
    throw InputError("--pcap: only with --backend sim or emulated");
  if (a.whole_run && a.backend != "sim") throw InputError("--whole-run: only with --backend sim");
  scenario::validate_scenario(scenario, origin);
  if (a.backend != "live") sim::require_simulatable(scenario, origin);
  return scenario;
}

std::string sample_text(const twinbench::Sample& s) {
  return fmt::format("{} fps={} bytes={} {}: {:.1f} ms, {} frames{}", s.scenario(), s.fps(),
                     s.body_bytes(), s.variant(), s.elapsed_ms(), s.frames(),
                     s.result() == "success" ? "" : " (" + s.result() + ": " + s.error() + ")");
}

twinbench::ResultSet run_on_emulated_path(const twinbench::Scenario& scenario,
                                          const runner::RunOptions& options, const RunArgs& a) {
  auto results = emulated::run_emulated(scenario, options, a.nodelay, a.pcap);
  if (!a.quiet) {
    const auto& path = results.run().emulated();
    const auto& host = results.run().host_timing();
    std::cerr << fmt::format(
        "emulated path: {} packets, lateness p50 {:.0f} us, p99 {:.0f} us; client wake-ups p50 "
        "{:.0f} us, p99 {:.0f} us (limit {:.0f}){}\n",
        path.packets(), path.lateness_p50_us(), path.lateness_p99_us(), host.p50_us(),
        host.p99_us(), path.lateness_limit_us(),
        path.valid() ? "" : ": INVALID, " + path.invalid_reason());
  }
  return results;
}

// The client's TLS trust for an https --server: the roots in --tls-ca, or the scenario's.
void trust_external_server(const twinbench::Scenario& scenario, const RunArgs& a,
                           runner::RunOptions& options) {
  std::string ca;
  if (!a.tls_ca.empty()) {
    std::ifstream in(a.tls_ca);
    if (!in) throw InputError("--tls-ca " + a.tls_ca + ": cannot read");
    ca.assign(std::istreambuf_iterator<char>(in), {});
  }
  options.tls = runner::client_tls_config(scenario, ca);
}

// Real sockets to --server, the scenario's target, or a server this command starts on loopback.
twinbench::ResultSet run_live(const twinbench::Scenario& scenario, runner::RunOptions options,
                              const RunArgs& a) {
  std::optional<live::LiveServer> own_server;
  std::string base_url = a.server.empty() ? scenario.target().base_url() : a.server;
  if (base_url.empty()) {
    live::ServerOptions server_options;
    server_options.nodelay = a.nodelay;
    if (runner::uses_tls(scenario)) {
      runner::TlsSetup tls = runner::make_tls_setup(scenario, {"127.0.0.1", "localhost"});
      server_options.tls = tls.server;
      options.tls = tls.client;
    }
    own_server.emplace(server_options);
    own_server->start();
    base_url = own_server->base_url();
    if (!a.quiet)
      std::cerr << "serving on " << base_url << " (loopback, Nagle " << (a.nodelay ? "off" : "on")
                << ")\n";
  } else if (base_url.starts_with("https://")) {
    trust_external_server(scenario, a, options);
  }
  live::LiveBackend live;
  options.base_url = base_url;
  options.server_nodelay = a.nodelay;
  auto results = runner::run_scenario(scenario, live.backend(), options);
  live.record_host_timing(*results.mutable_run());
  if (own_server && !a.quiet) {
    const auto st = own_server->stats();
    std::cerr << fmt::format("server: {} connections, {} requests\n", st.connections_accepted,
                             st.requests_served);
  }
  return results;
}

// Writes the result files, checks the scenario's expectations and the --baseline, and says what
// the exit status is: 1 when an expectation is breached or a cell regressed, else 0.
int judge_run(const twinbench::ResultSet& results, const RunArgs& a, const std::string& out,
              const std::optional<twinbench::ResultSet>& baseline) {
  const auto checks = verdicts::check_expectations(results);
  std::optional<verdicts::ResultDiff> diff;
  if (baseline) diff = verdicts::diff_results(*baseline, results, a.tolerance);
  std::string appendix = verdicts::expectations_markdown(checks);
  if (diff)
    appendix += (appendix.empty() ? "" : "\n") +
                verdicts::diff_markdown(*diff, a.baseline, out, "## Against the baseline");
  scenario::write_results(results, out, appendix);
  std::vector<verdicts::JUnitSuite> suites;
  if (!checks.empty()) suites.push_back(verdicts::expectations_junit(checks, results.scenario().name()));
  if (diff) suites.push_back(verdicts::diff_junit(*diff, "baseline " + a.baseline));
  if (!a.junit.empty()) verdicts::write_junit(a.junit, suites);
  std::cout << scenario::results_markdown(results, appendix);
  if (!a.quiet) std::cerr << "wrote " << out << "/results.{json,csv,md}\n";
  for (const auto& c : checks)
    if (!c.held())
      std::cerr << fmt::format("expectation breached: expect[{}] {}: {} required, {}\n", c.index,
                               c.cell(), c.requirement(), c.outcome());
  if (!checks.empty()) std::cerr << verdicts::expectations_summary(checks) << "\n";
  if (diff) {
    for (const auto& c : diff->cells)
      if (c.change == verdicts::Change::regressed || c.change == verdicts::Change::removed)
        std::cerr << fmt::format("regressed against the baseline: {} {}: {}\n", c.scenario,
                                 c.cell(), c.why());
    std::cerr << "baseline " << a.baseline << ": " << diff->summary() << "\n";
  }
  return verdicts::breached(checks) > 0 || (diff && diff->regressed()) ? 1 : 0;
}

// Writes the result files and prints the report; a failed run has thrown before anything is
// written.
void run_command(const RunArgs& a, int* exit_status) {
  const twinbench::Scenario scenario = load_run_scenario(a);
  const std::string out = a.out.empty() ? "out/" + scenario.name() + "-" + a.backend : a.out;
  // Read before the run: a bad baseline is an input error, and --out may be the same directory.
  std::optional<twinbench::ResultSet> baseline;
  if (!a.baseline.empty()) baseline = verdicts::read_result_set(a.baseline);
  runner::RunOptions options;
  options.seed = a.seed;
  options.stop_requested = stop_signal_received;
  if (!a.quiet) {
    auto progress = std::make_shared<runner::ProgressLine>("samples");
    options.on_sample = [progress](const twinbench::Sample& s, std::size_t done,
                                   std::size_t total) {
      progress->update(done, total, sample_text(s));
    };
  }
  const twinbench::ResultSet results =
      a.backend == "sim"        ? sim::run_simulated(scenario, options, a.jobs, a.pcap, a.whole_run)
      : a.backend == "emulated" ? run_on_emulated_path(scenario, options, a)
                                : run_live(scenario, options, a);
  *exit_status = judge_run(results, a, out, baseline);
}}  // namespace

Command add_run_command(CLI::App& app) {
  auto a = std::make_shared<RunArgs>();
  auto* cmd =
      app.add_subcommand("run", "Run a scenario and write results.json, results.csv, results.md");
  cmd->add_option("scenario", a->scenario,
                  "Scenario textproto file (default: the published latency scenario, built in)");
  cmd->add_option(
         "--backend", a->backend,
         "sim (ns-3 simulated network), emulated (real kernel TCP through an emulated link; "
         "needs CAP_NET_ADMIN) or live (real sockets to a server)")
      ->check(CLI::IsMember({"live", "sim", "emulated"}));
  cmd->add_option("--server", a->server,
                  "Base URL of a server to measure; default: start one on loopback");
  cmd->add_option("--out", a->out, "Output directory (default out/<scenario>-<backend>)");
  cmd->add_flag("--nodelay", a->nodelay, "Set TCP_NODELAY on the server this command starts");
  cmd->add_option("--seed", a->seed, "Seed of the simulation's randomness (loss, jitter)");
  cmd->add_option("--jobs,-j", a->jobs, "Simulations run at once (default: all cores)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--runs", a->runs, "Override the scenario's measured rounds");
  cmd->add_option("--warmups", a->warmups, "Override the scenario's warmup rounds");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress on stderr");
  cmd->add_flag("--tls", a->tls, "HTTPS (the scenario's tls section, or its defaults)");
  cmd->add_option(
      "--profile", a->profile,
      "Network profile laid over the scenario: built-in name (lightsail-2026) or textproto file");
  cmd->add_option("--pcap", a->pcap,
                  "sim, emulated: write packet captures of both hosts into this directory");
  cmd->add_flag(
      "--whole-run", a->whole_run,
      "sim: simulate the interleaved run as one simulation per Session scope, not split into "
      "simulations per variant (slower; to check the split on a scenario)");
  cmd->add_option("--tls-ca", a->tls_ca, "PEM file of the roots to trust for an https --server");
  cmd->add_option("--baseline", a->baseline,
                  "Results to diff against (a run's --out directory or its results.json): exit 1 "
                  "when a cell regressed beyond the tolerance (docs/ci.md)");
  add_tolerance_options(cmd, a->tolerance);
  cmd->add_option("--junit", a->junit,
                  "Also write the expectations' and the baseline's verdicts as JUnit XML");
  auto status = std::make_shared<int>(0);
  return {cmd, [a, status] { stop_on_signals([&] { run_command(*a, status.get()); }); }, status};
}

}  // namespace tb::app
