#pragma once
// The byte-stream seam over an ns-3 TCP socket on the simulated client node. Polled, never
// blocks. Received bytes stay in the socket's receive buffer until read_some() takes them, so a
// reader that is slow (frame-gated) shrinks the advertised window as a real socket does.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <ns3/event-id.h>
#include <ns3/node.h>
#include <ns3/socket.h>

#include "twinbench/clientcore/transport.hpp"
#include "twinbench/sim/linux_tcp_socket.hpp"
#include "twinbench/scenario/network.hpp"

namespace tb::sim {

// Called after socket events (connected, data arrived, send space, close) of any transport of a
// factory, in an event of its own at the same simulated time (events in one instant coalesce).
using ActivityCallback = std::function<void()>;

class NsTransport : public tb::Transport {
 public:
  NsTransport(ns3::Ptr<LinuxTcpSocket> socket, std::shared_ptr<const ActivityCallback> on_activity);
  ~NsTransport() override;  // closes; must run before the SimulationScope ends
  NsTransport(const NsTransport&) = delete;
  NsTransport& operator=(const NsTransport&) = delete;

  void connect(const Endpoint& to) override;
  TransportStatus status() override;
  std::size_t write_some(std::span<const std::byte> data) override;
  ReadResult read_some(std::span<std::byte> out) override;
  std::size_t available() override;
  void close() override;
  std::string error() const override { return error_; }

  const LinuxTcpSocket& socket() const { return *socket_; }

 private:
  void on_connected(ns3::Ptr<ns3::Socket>);
  void on_connect_failed(ns3::Ptr<ns3::Socket>);
  void on_peer_closed(ns3::Ptr<ns3::Socket>);
  void on_reset(ns3::Ptr<ns3::Socket>);
  void on_data(ns3::Ptr<ns3::Socket>);
  void on_send_space(ns3::Ptr<ns3::Socket>, uint32_t);
  void fail(std::string why);
  // Drops the socket's callbacks into this object. Not from inside one of them: replacing a
  // running ns-3 callback destroys it.
  void detach();
  void notify();

  ns3::Ptr<LinuxTcpSocket> socket_;
  std::shared_ptr<const ActivityCallback> on_activity_;
  TransportStatus status_ = TransportStatus::kIdle;  // kConnected stays until every byte is read
  bool peer_closed_ = false;
  std::string error_;
  ns3::EventId notify_event_;
};

// Creates NsTransports on the client node, each with its own socket.
class NsTransportFactory : public tb::TransportFactory {
 public:
  NsTransportFactory(ns3::Ptr<ns3::Node> node, scenario::ResolvedTcp tcp, std::uint32_t mtu_bytes,
                     std::int64_t first_stream);
  std::unique_ptr<Transport> create() override;
  void set_activity_callback(ActivityCallback callback);

 private:
  ns3::Ptr<ns3::Node> node_;
  scenario::ResolvedTcp tcp_;
  std::uint32_t mtu_bytes_;
  std::int64_t next_stream_;
  std::shared_ptr<ActivityCallback> on_activity_ = std::make_shared<ActivityCallback>();
};

}  // namespace tb::sim
