#pragma once
// The simulated backend assembled: ns-3's simulator as the clock, the scenario's network (link and
// TCP stacks) with the server core on the far side, workers as simulated events, a resolver with a
// fixed lookup time, and downloads "to file" counted in memory. One per simulation.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "twinbench/clientcore/delay_resolver.hpp"
#include "twinbench/clientcore/scheduled_threads.hpp"
#include "twinbench/runner/run_scenario.hpp"
#include "twinbench/sim/ns_scheduler.hpp"
#include "twinbench/servercore/deterministic_random.hpp"
#include "twinbench/sim/sim_network.hpp"
#include "twinbench/runner/tls_setup.hpp"

namespace tb::sim {

// Counts the bytes written to each sink name; a download check compares and forgets them.
class CountingSinks : public BodySinkFactory {
 public:
  std::unique_ptr<BodySink> open(const std::string& name) override;
  std::string check_and_remove(const std::string& name, std::uint64_t expected);

 private:
  std::map<std::string, std::uint64_t> written_;
};

class SimBackend {
 public:
  SimBackend(const twinbench::Scenario& scenario, std::uint64_t seed);
  runner::Backend& backend() { return backend_; }
  // The URL requests go to: the scenario's host (resolved to the simulated server) or its address.
  const std::string& base_url() const { return base_url_; }
  const sim::SimNetwork& network() const { return network_; }
  void capture(const std::string& prefix) { network_.capture(prefix); }
  // For an HTTPS scenario: the clients' TLS settings, trusting the simulated server's root.
  const std::optional<TlsClientConfig>& tls_client() const { return tls_client_; }

 private:
  sim::SimulationScope scope_;  // first in, last out: Simulator::Destroy runs after everything
  // HTTPS only: OpenSSL's randomness seeded like the rest of the simulation, so handshake bytes
  // (not just their sizes) are the same run to run.
  std::unique_ptr<servercore::DeterministicRandom> random_;
  sim::NsScheduler scheduler_;
  std::optional<runner::TlsSetup> tls_;
  std::optional<TlsClientConfig> tls_client_;
  sim::SimNetwork network_;
  ScheduledThreads threads_;
  std::string base_url_;
  DelayResolver resolver_;
  CountingSinks sinks_;
  runner::Backend backend_;
};

// What the simulated server's certificate names: the target's host and the server's address.
std::vector<std::string> simulated_server_names(const twinbench::Scenario& scenario);

// Throws tb::scenario::ScenarioError when `scenario` (read from `origin`) cannot be simulated: it
// needs a network section, and uncapped frames need a frame time, or simulated time stands still.
void require_simulatable(const twinbench::Scenario& scenario, const std::string& origin);

}  // namespace tb::sim
