#pragma once
// The simulated path of a scenario: a client node and a server node joined by one bottleneck each
// way (rate, drop-tail queue, one-way delay, order-keeping jitter, random loss), Linux-like TCP on
// both ends (tcp_config.hpp), and the benchmark server core behind an ns-3 application.
// Build it inside a SimulationScope and drive it with an NsScheduler.
#include <cstdint>
#include <memory>
#include <string>

#include <ns3/net-device.h>
#include <ns3/node.h>

#include "scenario.pb.h"
#include "twinbench/clientcore/transport.hpp"
#include "twinbench/servercore/server_connection.hpp"
#include "twinbench/servercore/tls_server.hpp"
#include "twinbench/sim/ns_transport.hpp"
#include "twinbench/scenario/network.hpp"

namespace tb::sim {

class BenchmarkServerApp;

// HTTPS on the simulated server: the real handshake bytes cross the simulated path.
struct SimTls {
  std::shared_ptr<const tb::servercore::TlsServerContext> context;  // null: plain HTTP
  // The server's CPU time for a full handshake (key exchange, signature): it sends its first
  // handshake flight this long after the ClientHello arrives. The client's is not modelled.
  double handshake_cpu_ms = 0;
};

class SimNetwork {
 public:
  // `seed` selects the run of every random stream of the path (loss, jitter, BBR): the same
  // config and seed give the same event sequence. Throws std::invalid_argument on a bad config.
  SimNetwork(const twinbench::Network& config, std::uint64_t seed,
             tb::servercore::ServerConfig server = {}, SimTls tls = {});
  ~SimNetwork();
  SimNetwork(const SimNetwork&) = delete;
  SimNetwork& operator=(const SimNetwork&) = delete;

  static constexpr const char* kServerAddress = "10.0.0.2";
  static constexpr std::uint16_t kServerPort = 8927;

  // Transports on the client node; also lets tests observe socket events.
  NsTransportFactory& client_transports() { return *client_transports_; }
  std::string server_address() const;
  std::uint16_t server_port() const;
  std::uint64_t connections_accepted() const;
  std::uint64_t requests_served() const;
  // Retransmission timeouts on the server's connections: where loss recovery ran out of other
  // means.
  std::uint64_t server_retransmission_timeouts() const;

  // Records every packet the two hosts send and receive, in simulated time, to
  // `<prefix>-client.pcap` and `<prefix>-server.pcap` (link type PPP; Wireshark, tcpdump -r).
  // Call before the simulation runs. Written as packets pass; complete once the simulation is
  // destroyed (run_simulated publishes them only then).
  void capture(const std::string& prefix);

  const scenario::ResolvedLink& link() const { return link_; }
  // The hosts, for installing other applications on the same path (benchmarks, experiments).
  ns3::Ptr<ns3::Node> client_node() const { return client_; }
  ns3::Ptr<ns3::Node> server_node() const { return server_; }

 private:
  scenario::ResolvedLink link_;
  ns3::Ptr<ns3::Node> client_;
  ns3::Ptr<ns3::Node> server_;
  ns3::Ptr<ns3::NetDevice> client_device_;
  ns3::Ptr<ns3::NetDevice> server_device_;
  ns3::Ptr<BenchmarkServerApp> server_app_;
  std::unique_ptr<NsTransportFactory> client_transports_;
};

}  // namespace tb::sim
