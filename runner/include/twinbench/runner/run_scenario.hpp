#pragma once
// Runs a scenario's protocol on any backend: cells (frame cap x body size), warmup and measured
// rounds, every variant once per round in interleave order, Sessions per the scenario's scope.
// The benchmark script is modelled too: it reads the clock just before each request call and
// just after the awaiting coroutine resumes, then starts the next request right there.
#include <functional>
#include <optional>
#include <string>

#include "results.pb.h"
#include "twinbench/clientcore/body_sink.hpp"
#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/scheduler.hpp"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/clientcore/threads.hpp"
#include "twinbench/clientcore/transport.hpp"

namespace tb::runner {

// The seams of one backend (live or simulated), plus how to drive its scheduler.
struct Backend {
  Scheduler& scheduler;
  Threads& threads;
  TransportFactory& transports;
  Resolver& resolver;
  BodySinkFactory& sinks;
  // Runs the scheduler until `done()` holds or `timeout` of backend time passes; false on timeout.
  std::function<bool(const std::function<bool()>& done, Duration timeout)> run_until;
  // Checks a download streamed to the sink `name` (its size) and removes it; an error text or "".
  std::function<std::string(const std::string& name, std::uint64_t expected_bytes)> check_download;
  std::string name;  // "live" or "sim"
};

struct RunOptions {
  std::string base_url;  // the server; overrides the scenario's target.base_url
  Duration request_timeout = std::chrono::seconds(120);
  std::uint64_t seed = 0;
  bool server_nodelay = false;
  // For https URLs. Each model gets its own context, renewed with the Sessions, so saved TLS
  // sessions (resumption) are per variant and per session scope.
  std::optional<TlsClientConfig> tls;
  // Called after every sample (for progress on stderr).
  std::function<void(const twinbench::Sample&, std::size_t done, std::size_t total)> on_sample;
};

// The scenario must be validated (tb::scenario::load_scenario does). Throws std::runtime_error
// when the backend stops making progress.
twinbench::ResultSet run_scenario(const twinbench::Scenario& scenario, Backend& backend,
                                  const RunOptions& options);

}  // namespace tb::runner
