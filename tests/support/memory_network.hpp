#pragma once
// An in-memory network on virtual time for the tests: client transports whose peers are objects
// in the same process (the real server core, or a scripted misbehaving server). Each direction
// has a one-way delay and optionally a rate, so bytes arrive when a link would deliver them.
// No TCP here (no windows, no loss): the tests of frame semantics need exact, simple timing.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "twinbench/clientcore/transport.hpp"
#include "twinbench/clientcore/virtual_scheduler.hpp"
#include "twinbench/servercore/server_connection.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace tb::testing {

struct LinkConfig {
  Duration one_way_delay = std::chrono::milliseconds(10);
  double bytes_per_second = 0;  // 0: infinitely fast
  // The handshake completes inside connect() (a loopback connect that wins the race against the
  // next poll); only with a zero delay.
  bool connect_at_once = false;
};

// The server side of one memory connection, as a peer sees it.
class PeerSocket {
 public:
  virtual ~PeerSocket() = default;
  virtual void send(std::span<const std::byte> data) = 0;
  virtual void close() = 0;  // FIN after everything sent
};

class Peer {
 public:
  virtual ~Peer() = default;
  virtual void on_connect(PeerSocket&) {}
  virtual void on_data(PeerSocket& socket, std::span<const std::byte> data) = 0;
  virtual void on_client_closed(PeerSocket&) {}
};

class MemoryNetwork : public TransportFactory {
 public:
  // `make_peer` returns nullptr to refuse a connection.
  MemoryNetwork(VirtualScheduler& scheduler, LinkConfig link,
                std::function<std::unique_ptr<Peer>()> make_peer);
  std::unique_ptr<Transport> create() override;
  std::uint64_t connections_accepted() const { return *accepted_; }

 private:
  VirtualScheduler& scheduler_;
  LinkConfig link_;
  std::function<std::unique_ptr<Peer>()> make_peer_;
  std::shared_ptr<std::uint64_t> accepted_ = std::make_shared<std::uint64_t>(0);
};

// A peer running the real server core (over TLS with `tls`); counts requests across all its
// connections.
std::function<std::unique_ptr<Peer>()> server_peers(
    std::shared_ptr<std::uint64_t> requests = nullptr, servercore::ServerConfig config = {},
    std::shared_ptr<const servercore::TlsServerContext> tls = nullptr);
// A peer that answers the first bytes it receives with `reply`, then closes if `close_after`.
std::function<std::unique_ptr<Peer>()> scripted_peers(std::string reply, bool close_after);

}  // namespace tb::testing
