#pragma once
// A scenario run on the emulated path: the live client core and the live server core, each in its
// own network namespace with the scenario's kernel TCP settings, joined by the link emulator.
#include <optional>
#include <stdexcept>
#include <string>

#include "results.pb.h"
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

}  // namespace tb::emulated
