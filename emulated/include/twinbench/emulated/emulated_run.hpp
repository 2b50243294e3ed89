#pragma once
// A scenario run on the emulated path: the live client core and the live server core, each in its
// own network namespace with the scenario's kernel TCP settings, joined by the link emulator.
#include <optional>
#include <stdexcept>
#include <string>

#include "results.pb.h"
#include "twinbench/emulated/emulated_path.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/runner/run_scenario.hpp"

namespace tb::emulated {

// The path cannot be built here (no CAP_NET_ADMIN, no namespaces, no TUN, a missing congestion
// control): a usage error (exit 2), with what is missing and what to do.
struct PathUnavailable : InputError {
  using InputError::InputError;
};

// The scenario must be validated and simulatable (a network section). `options.base_url` is set
// here; `server_nodelay` adds to the scenario's server_tcp.nodelay. Throws PathUnavailable, or
// std::runtime_error when the run fails.
// `capture_dir`, if set, receives emulated-client.pcap and emulated-server.pcap (headers only).
twinbench::ResultSet run_emulated(const twinbench::Scenario& scenario, runner::RunOptions options,
                                  bool server_nodelay = false, const std::string& capture_dir = {});

// What stops the path from being built here, with what to do; nothing when it can be.
std::optional<std::string> run_emulated_preflight(const twinbench::Scenario& scenario);

// The port the emulated server listens on, in its own namespace.
inline constexpr std::uint16_t kEmulatedServerPort = 8927;

// The path of the scenario's network section; `server_nodelay` adds to server_tcp.nodelay.
PathConfig path_config(const twinbench::Scenario& scenario, std::uint64_t seed,
                       bool server_nodelay = false);

// The live server for the server's namespace (the scenario's server settings, HTTPS with test
// credentials when the scenario asks for TLS); sets the client's base URL and TLS in `options`,
// and the root certificate's PEM in `ca_pem` (if given) when HTTPS.
live::ServerOptions emulated_server(const twinbench::Scenario& scenario, const PathConfig& config,
                                    runner::RunOptions& options, std::string* ca_pem = nullptr);

// What the path applied and how well it kept the link's timing (and the client's wake-ups, when
// run.host_timing has them), into run.emulated: settings, packets, lateness and validity.
void record_path(const twinbench::Scenario& scenario, const PathConfig& config,
                 const PathReport& report, twinbench::RunInfo& run);

// The p99 packet lateness a run must keep to be valid: 2 % of the smaller of the round trip and
// the shortest capped frame (docs/emulated-path.md, Validity).
double lateness_limit_us(const twinbench::Scenario& scenario, const scenario::ResolvedLink& link);

}  // namespace tb::emulated
