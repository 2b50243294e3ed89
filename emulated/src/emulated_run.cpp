#include "twinbench/emulated/emulated_run.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "twinbench/live/live_backend.hpp"
#include "twinbench/runner/tls_setup.hpp"
#include "twinbench/emulated/emulated_path.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/network.hpp"

namespace tb::emulated {
namespace {

using PathInfo = twinbench::EmulatedPath;  // the results message, not the path

void add_setting(PathInfo& info, const std::string& side, const AppliedSetting& s) {
  auto* out = info.add_settings();
  out->set_side(side);
  out->set_field(s.field);
  out->set_value(s.value);
  out->set_applied(s.applied);
  out->set_how(s.how);
}

// The server's settings beyond its namespace's kernel ones, and what the path does not model,
// stated rather than dropped. `server_tcp` is as applied (the run's --nodelay included).
std::vector<AppliedSetting> server_settings(const twinbench::Scenario& scenario,
                                            const scenario::ResolvedTcp& server_tcp) {
  std::vector<AppliedSetting> out;
  const auto& network = scenario.network();
  out.push_back({"nodelay", server_tcp.nodelay ? "true" : "false", true,
                 "TCP_NODELAY on accepted sockets when true"});
  if (network.server_think_ms() > 0)
    out.push_back({"server_think_ms", fmt::format("{:g}", network.server_think_ms()), false,
                   "not applied: the live server answers as soon as it has the request"});
  if (scenario.has_tls() && scenario.tls().handshake_cpu_ms() > 0)
    out.push_back({"tls.handshake_cpu_ms", fmt::format("{:g}", scenario.tls().handshake_cpu_ms()),
                   false, "not applied: the handshake costs what it costs on this machine's CPU"});
  return out;
}

// The client's: what the path does not model.
std::vector<AppliedSetting> client_gaps(const twinbench::Scenario& scenario,
                                        const scenario::ResolvedTcp& client_tcp) {
  std::vector<AppliedSetting> out;
  if (scenario.network().resolve_ms() > 0)
    out.push_back({"resolve_ms", fmt::format("{:g}", scenario.network().resolve_ms()), false,
                   "not applied: the client connects to an address literal"});
  if (client_tcp.nodelay)
    out.push_back(
        {"nodelay", "true", false, "not applied: the client never sets TCP_NODELAY, like Godot"});
  return out;
}

}  // namespace

// 2 % of the smaller of the round trip and the shortest capped frame (none: of the round trip).
double lateness_limit_us(const twinbench::Scenario& scenario, const scenario::ResolvedLink& link) {
  double period_ms = link.client_to_server_delay_ms + link.server_to_client_delay_ms;
  for (const auto fps : scenario.frame_caps()) {
    if (fps > 0) period_ms = period_ms > 0 ? std::min(period_ms, 1000.0 / fps) : 1000.0 / fps;
  }
  return period_ms * 1e3 * 0.02;
}

std::optional<std::string> run_emulated_preflight(const twinbench::Scenario& scenario) {
  std::set<std::string> congestion_controls;
  for (const auto& tcp : {scenario.network().client_tcp(), scenario.network().server_tcp()})
    congestion_controls.insert(
        emulated::kernel_congestion_control(scenario::resolve(tcp).congestion_control));
  if (const auto missing =
          emulated::check_needs({congestion_controls.begin(), congestion_controls.end()}))
    return missing->message + " [step: " + missing->step + "]";
  return std::nullopt;
}

void record_path(const twinbench::Scenario& scenario, const emulated::PathConfig& config,
                 const emulated::PathReport& report, twinbench::RunInfo& run) {
  PathInfo& info = *run.mutable_emulated();
  run.set_backend("emulated");
  for (const auto& set : report.client_settings) add_setting(info, "client", set);
  for (const auto& set : client_gaps(scenario, config.client_tcp)) add_setting(info, "client", set);
  for (const auto& set : report.server_settings) add_setting(info, "server", set);
  for (const auto& set : server_settings(scenario, config.server_tcp))
    add_setting(info, "server", set);
  info.set_lateness_p50_us(report.lateness.p50_us);
  info.set_lateness_p99_us(report.lateness.p99_us);
  info.set_lateness_max_us(report.lateness.max_us);
  info.set_packets(report.uplink.packets + report.downlink.packets);
  info.set_queue_drops(report.uplink.queue_drops + report.downlink.queue_drops);
  info.set_policer_drops(report.uplink.policer_drops + report.downlink.policer_drops);
  info.set_losses(report.uplink.losses + report.downlink.losses);
  const double limit = lateness_limit_us(scenario, config.link);
  info.set_lateness_limit_us(limit);
  // Both the link and the hosts must keep the timing the model assumes: packets leave when due,
  // and the client's threads wake when they asked to (run.host_timing). A quiet 2-core VM's
  // client threads wake 0.12-0.18 ms late at p99 (the 12 points of results/compare), a busy
  // one's several ms (3-9 with two busy loops beside it; docs/emulated-path.md), so the wake-ups'
  // limit is at least kQuietWakeupUs: 2 % of a 120 fps frame alone would fail a quiet machine.
  constexpr double kQuietWakeupUs = 500;
  const double wakeup_limit = limit > 0 ? std::max(limit, kQuietWakeupUs) : 0;
  info.set_wakeup_limit_us(wakeup_limit);
  std::vector<std::string> late;
  if (limit > 0 && report.lateness.p99_us > limit)
    late.push_back(
        fmt::format("p99 packet lateness {:.0f} us exceeds {:.0f} us (2 % of the RTT or "
                    "frame)",
                    report.lateness.p99_us, limit));
  if (wakeup_limit > 0 && run.host_timing().p99_us() > wakeup_limit)
    late.push_back(
        fmt::format("p99 wake-up lateness of the client's threads {:.0f} us exceeds "
                    "{:.0f} us",
                    run.host_timing().p99_us(), wakeup_limit));
  info.set_valid(late.empty());
  if (!info.valid())
    info.set_invalid_reason(fmt::format("{}: the machine was too busy to keep the path's timing",
                                        fmt::join(late, "; ")));
}

emulated::PathConfig path_config(const twinbench::Scenario& scenario, std::uint64_t seed,
                                 bool server_nodelay) {
  emulated::PathConfig config;
  config.link = scenario::resolve(scenario.network().link());
  config.client_tcp = scenario::resolve(scenario.network().client_tcp());
  config.server_tcp = scenario::resolve(scenario.network().server_tcp());
  config.server_tcp.nodelay = config.server_tcp.nodelay || server_nodelay;
  config.seed = seed;
  return config;
}

live::ServerOptions emulated_server(const twinbench::Scenario& scenario,
                                    const emulated::PathConfig& config,
                                    runner::RunOptions& options, std::string* ca_pem) {
  live::ServerOptions server_options;
  server_options.bind_address = emulated::kServerAddress;
  server_options.port = kEmulatedServerPort;
  server_options.nodelay = config.server_tcp.nodelay;
  server_options.congestion_control =
      emulated::kernel_congestion_control(config.server_tcp.congestion_control);
  std::string scheme = "http";
  if (runner::uses_tls(scenario)) {
    runner::TlsSetup tls = runner::make_tls_setup(scenario, {emulated::kServerAddress});
    server_options.tls = tls.server;
    options.tls = tls.client;
    if (ca_pem != nullptr) *ca_pem = tls.ca_pem;
    scheme = "https";
  }
  options.base_url =
      fmt::format("{}://{}:{}", scheme, emulated::kServerAddress, kEmulatedServerPort);
  options.server_nodelay = config.server_tcp.nodelay;
  return server_options;
}

twinbench::ResultSet run_emulated(const twinbench::Scenario& scenario, runner::RunOptions options,
                                  bool server_nodelay, const std::string& capture_dir) {
  emulated::PathConfig config = path_config(scenario, options.seed, server_nodelay);
  if (!capture_dir.empty()) {
    std::filesystem::create_directories(capture_dir);
    config.capture_prefix = capture_dir + "/emulated";
  }
  if (const auto missing = run_emulated_preflight(scenario)) throw PathUnavailable(*missing);

  const live::ServerOptions server_options = emulated_server(scenario, config, options);

  auto server = [&](const std::function<void()>& ready, int) {
    live::LiveServer own(server_options);
    ready();
    own.run_foreground();  // until SIGTERM
    return 0;
  };
  auto client = [&](const std::function<void()>& ready, int out_fd) {
    ready();
    live::TransportOptions transport;
    transport.congestion_control =
        emulated::kernel_congestion_control(config.client_tcp.congestion_control);
    live::LiveBackend live(transport);
    twinbench::ResultSet results;
    try {
      results = runner::run_scenario(scenario, live.backend(), options);
    } catch (const runner::RunStopped&) {
      return 1;  // the parent reports the stop
    }
    live.record_host_timing(*results.mutable_run());
    std::string bytes;
    results.SerializeToString(&bytes);
    for (std::size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::send(out_fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return 1;
      done += static_cast<std::size_t>(n);
    }
    return 0;
  };

  emulated::EmulatedPath path(config, server, client);
  // The client side stops by the same test in its own process (a Ctrl-C reaches both); the path's
  // destructor ends the sides of a stopped run.
  const std::optional<std::string> bytes = path.client_output(options.stop_requested);
  if (!bytes || options.stopping()) throw runner::RunStopped();
  const int status = path.client_status();
  const emulated::PathReport report = path.finish();
  twinbench::ResultSet results;
  if (status != 0 || !results.ParseFromString(*bytes))
    throw std::runtime_error(
        fmt::format("the emulated run's client side failed (status {})", status));

  record_path(scenario, config, report, *results.mutable_run());
  return results;
}

}  // namespace tb::emulated
