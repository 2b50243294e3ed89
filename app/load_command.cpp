// `twinbench load`: the live load benchmark (docs/load.md). Per repetition it starts a fresh
// `twinbench serve` child on 127.0.0.1 (unless --server names one), runs the generator and
// records the figures; then it writes the JSON per repetition and the summaries.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "commands.hpp"
#include "twinbench/loadbench/load_generator.hpp"
#include "twinbench/loadbench/server_process.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/loadbench/load_report.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::app {
namespace {

namespace fs = std::filesystem;

struct LoadArgs {
  std::string scenario;  // optional: its requests instead of POST /echo
  std::string server;    // external server URL; empty: start twinbench serve per repetition
  unsigned clients = 16, window = 16, payload = 1024, repeat = 1;
  double duration_s = 1.0, warmup_s = 0.25;
  bool tls = false, nodelay = false, coalesce_writes = false;
  unsigned server_threads = 1, client_threads = 1;
  std::string io_model = "shared";
  std::string server_nagle = "unknown";  // what an external server does; stated, not measured
  std::string tls_ca;                    // trusted root for an external https server
  std::string out = "out/load";
  std::string label, note;
};

// The requests each connection sends in turn, and their description for the results.
std::pair<std::vector<loadbench::LoadRequest>, std::string> build_requests(
    const LoadArgs& a, const std::string& host) {
  std::vector<loadbench::LoadRequest> requests;
  if (a.scenario.empty()) {
    std::string body(a.payload, '\0');
    for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
    requests.push_back(
        {loadbench::format_load_request("POST", "/echo", host, body), body, std::nullopt});
    return {requests, fmt::format("POST /echo {} bytes echoed", a.payload)};
  }
  const auto scenario = scenario::load_scenario(a.scenario);
  std::string described;
  for (const std::uint64_t bytes : scenario.body_bytes()) {
    const std::string path = scenario::target_path(scenario, bytes);
    std::optional<std::uint64_t> size;
    if (bytes != 0) size = bytes;
    requests.push_back({loadbench::format_load_request("GET", path, host, ""), std::nullopt, size});
    described += (described.empty() ? "GET " : "; GET ") + path;
  }
  return {requests, described + " (from " + a.scenario + ")"};
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("model name"))
      return std::string(scenario::trim(line.substr(line.find(':') + 1)));
  return "unknown";
}

twinbench::Machine machine(const LoadArgs& a) {
  twinbench::Machine m;
  m.set_cpu_model(cpu_model());
  m.set_cores(std::thread::hardware_concurrency());
  m.set_build_type(TWINBENCH_BUILD_TYPE);
  m.set_twinbench_version(TWINBENCH_VERSION);
  m.set_note(a.note);
  return m;
}

twinbench::LoadConfig config(const LoadArgs& a, const std::string& url,
                             const std::string& requests) {
  twinbench::LoadConfig c;
  const bool own = a.server.empty();
  c.set_label(!a.label.empty() ? a.label
              : own
                  ? fmt::format("twinbench {} {} x{} Nagle {} {} writes", a.tls ? "https" : "http",
                                a.io_model, a.server_threads, a.nodelay ? "off" : "on",
                                a.coalesce_writes ? "coalesced" : "split")
                  : url);
  c.set_server(own ? "twinbench serve" : "external");
  c.set_url(url);
  c.set_tls(url.starts_with("https://"));
  if (own) {
    c.set_server_threads(a.server_threads);
    c.set_io_model(a.io_model);
    c.set_server_writes(a.coalesce_writes ? "coalesced" : "split");
  }
  c.set_client_nagle(a.nodelay ? "off" : "on");
  c.set_server_nagle(own ? (a.nodelay ? "off" : "on") : a.server_nagle);
  c.set_clients(a.clients);
  c.set_window(a.window);
  c.set_requests(requests);
  c.set_client_threads(a.client_threads);
  c.set_warmup_s(a.warmup_s);
  c.set_duration_s(a.duration_s);
  return c;
}

// A fresh twinbench serve for one repetition; with TLS its root CA is written to `ca_file`.
std::unique_ptr<loadbench::ServerProcess> start_server(const LoadArgs& a, const fs::path& ca_file) {
  std::vector<std::string> argv = {loadbench::own_executable(),
                                   "serve",
                                   "--bind",
                                   "127.0.0.1",
                                   "--port",
                                   "0",
                                   "--threads",
                                   std::to_string(a.server_threads),
                                   "--io-model",
                                   a.io_model};
  if (a.nodelay) argv.push_back("--nodelay");
  if (a.coalesce_writes) argv.push_back("--coalesce-writes");
  if (a.tls) {
    argv.insert(argv.end(),
                {"--tls", "--tls-key-type", "ecdsa-p256", "--tls-ca-out", ca_file.string()});
  }
  return std::make_unique<loadbench::ServerProcess>(argv, std::chrono::seconds(20));
}

std::string read_or_throw(const fs::path& file, const std::string& what) {
  const auto text = scenario::read_file(file);
  if (!text) throw InputError(what + ": cannot read " + file.string());
  return *text;
}

twinbench::LoadRepetition measure(const LoadArgs& a, loadbench::LoadOptions options,
                                  const std::string& url, const std::string& requests,
                                  unsigned repetition) {
  options.server = *parse_url(url);
  const loadbench::LoadMeasurement m = loadbench::run_load(options);
  twinbench::LoadRepetition r;
  r.set_repetition(repetition);
  *r.mutable_config() = config(a, url, requests);
  *r.mutable_machine() = machine(a);
  r.set_measured_s(std::chrono::duration<double>(m.measured).count());
  loadbench::fill_load_figures(r, m.latencies_ms, static_cast<double>(m.body_bytes));
  r.set_errors(m.error_count());
  for (const auto& [kind, count] : m.errors) (*r.mutable_errors_by_kind())[kind] = count;
  r.set_connections_opened(m.connections_opened);
  return r;
}

loadbench::LoadOptions generator_options(const LoadArgs& a) {
  loadbench::LoadOptions o;
  o.clients = a.clients;
  o.window = a.window;
  o.threads = a.client_threads;
  o.nodelay = a.nodelay;
  o.warmup = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(a.warmup_s));
  o.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(a.duration_s));
  if (!a.tls_ca.empty()) o.trusted_ca_pem = read_or_throw(a.tls_ca, "--tls-ca");
  return o;
}

void check_args(LoadArgs& a) {
  if (!a.server.empty()) {
    const auto url = parse_url(a.server);
    if (!url) throw InputError("--server: expected an http:// or https:// URL, got " + a.server);
    if (a.tls && !url->tls()) throw InputError("--tls: the --server URL is not https://");
    a.tls = url->tls();
  } else if (a.server_nagle != "unknown") {
    throw InputError("--server-nagle: only for an external --server (twinbench serve's is known)");
  }
  if (a.coalesce_writes && !a.server.empty())
    throw InputError("--coalesce-writes: only for the started server, not an external --server");
  if (!a.tls_ca.empty() && a.server.empty())
    throw InputError("--tls-ca: only for an external --server (its own server's CA is known)");
}

// One repetition against its own fresh server or the external one.
twinbench::LoadRepetition run_repetition(const LoadArgs& a, const loadbench::LoadOptions& base,
                                         const std::string& requests, unsigned k) {
  if (!a.server.empty()) return measure(a, base, a.server, requests, k);
  // Holds the started server's root CA; removed however the repetition ends.
  struct TempDir {
    fs::path path = fs::temp_directory_path() / fmt::format("twinbench-load-{}", ::getpid());
    TempDir() { fs::create_directories(path); }
    ~TempDir() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  } dir;
  const fs::path ca_file = dir.path / "ca.pem";
  auto server = start_server(a, ca_file);
  loadbench::LoadOptions options = base;
  if (a.tls) options.trusted_ca_pem = read_or_throw(ca_file, "the server's root CA");
  auto r = measure(a, options, server->url(), requests, k);
  server->stop();
  return r;
}

void load_command(LoadArgs a) {
  check_args(a);
  const std::string host = a.server.empty() ? "127.0.0.1" : parse_url(a.server)->host;
  auto [requests, described] = build_requests(a, host);
  loadbench::LoadOptions base = generator_options(a);
  base.requests = std::make_shared<const std::vector<loadbench::LoadRequest>>(std::move(requests));
  std::vector<twinbench::LoadRepetition> reps;
  for (unsigned k = 1; k <= a.repeat; ++k) {
    auto r = run_repetition(a, base, described, k);
    std::cerr << fmt::format(
        "twinbench load: repetition {}/{}: {:.0f} req/s, p99 {:.3f} ms, "
        "{} errors\n",
        k, a.repeat, r.requests_per_s(), r.latency_ms().p99(), r.errors());
    reps.push_back(std::move(r));
  }
  loadbench::write_load_results(reps, a.out);
  std::cout << loadbench::load_summary_markdown(reps) << std::flush;
  for (const auto& r : reps)
    if (r.responses() == 0)
      throw std::runtime_error(fmt::format("repetition {} completed no response", r.repetition()));
}

void add_load_options(CLI::App* cmd, LoadArgs& a) {
  cmd->add_option("scenario", a.scenario, "Scenario whose requests to send (default: POST /echo)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--server", a.server, "Measure this server (default: start twinbench serve)");
  cmd->add_option("--clients", a.clients, "Keep-alive connections")
      ->check(CLI::Range(1u, 4096u))
      ->capture_default_str();
  cmd->add_option("--window", a.window, "Requests outstanding per connection, pipelined")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  cmd->add_option("--payload", a.payload, "POST /echo body bytes")
      ->check(CLI::Range(0u, 1u << 24))
      ->capture_default_str();
  cmd->add_option("--duration", a.duration_s, "Measured seconds")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  cmd->add_option("--warmup", a.warmup_s, "Seconds before measuring")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--repeat", a.repeat, "Repetitions (a fresh server process each)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  cmd->add_option("--out", a.out, "Directory of the result files")->capture_default_str();
  cmd->add_flag("--tls", a.tls, "HTTPS (the started server uses a generated ECDSA P-256 chain)");
  cmd->add_flag("--nodelay", a.nodelay,
                "Disable Nagle on the generator's sockets and the started server's");
  cmd->add_option("--threads", a.server_threads, "The started server's threads")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--io-model", a.io_model, "The started server's io-model")
      ->check(CLI::IsMember({"shared", "sharded"}))
      ->capture_default_str();
  cmd->add_flag("--coalesce-writes", a.coalesce_writes,
                "The started server writes a response's head and small body at once");
  cmd->add_option("--client-threads", a.client_threads, "The generator's threads")
      ->check(CLI::Range(1u, 64u))
      ->capture_default_str();
  cmd->add_option("--server-nagle", a.server_nagle, "Nagle on an external server, as stated")
      ->check(CLI::IsMember({"on", "off", "unknown"}));
  cmd->add_option("--tls-ca", a.tls_ca, "Root CA (PEM) to trust for an external https server")
      ->check(CLI::ExistingFile);
  cmd->add_option("--label", a.label, "Name of the run in the summaries");
  cmd->add_option("--note", a.note, "Recorded with the machine (e.g. other work running)");
}

}  // namespace

Command add_load_command(CLI::App& app) {
  auto a = std::make_shared<LoadArgs>();
  auto* cmd = app.add_subcommand("load", "Live load benchmark: many pipelined keep-alive clients");
  add_load_options(cmd, *a);
  return {cmd, [a] { load_command(*a); }};
}

}  // namespace tb::app
