#include "twinbench/sim/sim_backend.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>

#include "twinbench/clientcore/url.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/seeds.hpp"

namespace tb::sim {

namespace {

class CountingSink : public BodySink {
 public:
  explicit CountingSink(std::uint64_t& bytes) : bytes_(bytes) {}
  bool write(std::span<const std::byte> data) override {
    bytes_ += data.size();
    return true;
  }
  bool finish() override { return true; }

 private:
  std::uint64_t& bytes_;
};

std::string simulated_base_url(const twinbench::Scenario& s, const sim::SimNetwork& network) {
  const auto url = parse_url(s.target().base_url());
  const std::string host = url ? url->host : network.server_address();
  return (runner::uses_tls(s) ? "https://" : "http://") + host + ":" +
         std::to_string(network.server_port());
}

std::optional<runner::TlsSetup> simulated_tls(const twinbench::Scenario& s) {
  if (!runner::uses_tls(s)) return std::nullopt;
  return runner::make_tls_setup(s, simulated_server_names(s), runner::ServerTiming::kSimulated);
}

sim::SimTls sim_tls(const std::optional<runner::TlsSetup>& tls) {
  if (!tls) return {};
  return sim::SimTls{tls->server, tls->handshake_cpu_ms};
}

std::map<std::string, std::string> hosts(const twinbench::Scenario& s,
                                         const sim::SimNetwork& network) {
  std::map<std::string, std::string> table;
  if (const auto url = parse_url(s.target().base_url()))
    table[url->host] = network.server_address();
  return table;
}

}  // namespace

std::vector<std::string> simulated_server_names(const twinbench::Scenario& s) {
  std::vector<std::string> names;
  if (const auto url = parse_url(s.target().base_url())) names.push_back(url->host);
  names.push_back(sim::SimNetwork::kServerAddress);
  return names;
}

void require_simulatable(const twinbench::Scenario& s, const std::string& origin) {
  if (!s.has_network()) {
    throw scenario::ScenarioError(origin +
                                  ": network: expected a network section (link delays and rates) "
                                  "to run with --backend sim");
  }
  const bool uncapped =
      std::find(s.frame_caps().begin(), s.frame_caps().end(), 0u) != s.frame_caps().end();
  if (uncapped && !(s.frame_loop().frame_work_ms() > 0)) {
    throw scenario::ScenarioError(origin +
                                  ": frame_loop.frame_work_ms: expected > 0 when frame_caps has 0 "
                                  "(uncapped) in simulation, got 0");
  }
}

std::unique_ptr<BodySink> CountingSinks::open(const std::string& name) {
  written_[name] = 0;
  return std::make_unique<CountingSink>(written_[name]);
}

std::string CountingSinks::check_and_remove(const std::string& name, std::uint64_t expected) {
  auto it = written_.find(name);
  if (it == written_.end()) return "download sink missing: " + name;
  const std::uint64_t got = it->second;
  written_.erase(it);
  if (got != expected) {
    return "download sink has " + std::to_string(got) + " bytes, expected " +
           std::to_string(expected);
  }
  return {};
}

SimBackend::SimBackend(const twinbench::Scenario& scenario, std::uint64_t seed)
    : scope_(seed),
      random_(runner::uses_tls(scenario) ? std::make_unique<servercore::DeterministicRandom>(seed)
                                         : nullptr),
      tls_(simulated_tls(scenario)),
      tls_client_(tls_ ? std::optional(tls_->client) : std::nullopt),
      network_(scenario.network(), seed, {}, sim_tls(tls_)),
      threads_(scheduler_, Duration{1000}),
      base_url_(simulated_base_url(scenario, network_)),
      resolver_(scheduler_, from_ms(scenario.network().resolve_ms()), hosts(scenario, network_)),
      backend_{scheduler_,
               threads_,
               network_.client_transports(),
               resolver_,
               sinks_,
               [this](const std::function<bool()>& done, Duration timeout) {
                 // No poll: a scenario run is done when its script goes idle, in a frame-loop
                 // event of this scheduler (each one checks); the frame loop ticks until the run
                 // ends, so a frame would see it too. A 1 ms poll was ~8 % of a download's events.
                 return scheduler_.run_until(done, timeout, Duration::zero());
               },
               [this](const std::string& name, std::uint64_t expected) {
                 return sinks_.check_and_remove(name, expected);
               },
               "sim",
               /*runs_many_clients=*/true} {}

}  // namespace tb::sim
