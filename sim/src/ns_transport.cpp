#include "twinbench/sim/ns_transport.hpp"

#include <arpa/inet.h>

#include <ns3/inet-socket-address.h>
#include <ns3/ipv4-address.h>
#include <ns3/packet.h>
#include <ns3/simulator.h>

#include <algorithm>

namespace tb::sim {

using ns3::MakeCallback;
using ns3::MakeNullCallback;
using ns3::Ptr;
using ns3::Socket;

NsTransport::NsTransport(Ptr<LinuxTcpSocket> socket,
                         std::shared_ptr<const ActivityCallback> on_activity)
    : socket_(std::move(socket)), on_activity_(std::move(on_activity)) {}

NsTransport::~NsTransport() {
  notify_event_.Cancel();
  close();
  detach();
}

void NsTransport::connect(const Endpoint& to) {
  if (status_ != TransportStatus::kIdle) return fail("connect() called twice");
  in_addr parsed{};
  if (inet_pton(AF_INET, to.address.c_str(), &parsed) != 1)
    return fail("not an IPv4 address: " + to.address);
  socket_->SetConnectCallback(MakeCallback(&NsTransport::on_connected, this),
                              MakeCallback(&NsTransport::on_connect_failed, this));
  socket_->SetCloseCallbacks(MakeCallback(&NsTransport::on_peer_closed, this),
                             MakeCallback(&NsTransport::on_reset, this));
  socket_->SetRecvCallback(MakeCallback(&NsTransport::on_data, this));
  socket_->SetSendCallback(MakeCallback(&NsTransport::on_send_space, this));
  status_ = TransportStatus::kConnecting;
  if (socket_->Connect(ns3::InetSocketAddress(ns3::Ipv4Address(ntohl(parsed.s_addr)), to.port)) !=
      0)
    fail("connect failed (ns-3 errno " + std::to_string(socket_->GetErrno()) + ")");
}

TransportStatus NsTransport::status() {
  if (status_ == TransportStatus::kConnected && peer_closed_ && socket_->GetRxAvailable() == 0)
    return TransportStatus::kClosed;
  return status_;
}

std::size_t NsTransport::write_some(std::span<const std::byte> data) {
  if (status_ != TransportStatus::kConnected) return 0;
  const auto n =
      static_cast<uint32_t>(std::min<std::size_t>(data.size(), socket_->GetTxAvailable()));
  if (n == 0) return 0;
  const int sent =
      socket_->Send(ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(data.data()), n), 0);
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

ReadResult NsTransport::read_some(std::span<std::byte> out) {
  if (status_ == TransportStatus::kError) return {ReadResult::Kind::kError, 0};
  if (status_ != TransportStatus::kConnected || out.empty())
    return {ReadResult::Kind::kWouldBlock, 0};
  if (const std::size_t n = socket_->read(out); n > 0) return {ReadResult::Kind::kData, n};
  return {peer_closed_ ? ReadResult::Kind::kEof : ReadResult::Kind::kWouldBlock, 0};
}

std::size_t NsTransport::available() {
  return status_ == TransportStatus::kConnected ? socket_->GetRxAvailable() : 0;
}

void NsTransport::close() {
  if (status_ == TransportStatus::kConnecting || status_ == TransportStatus::kConnected) {
    socket_->Close();
    status_ = TransportStatus::kClosed;
  }
}

void NsTransport::on_connected(Ptr<Socket>) {
  status_ = TransportStatus::kConnected;
  notify();
}

void NsTransport::on_connect_failed(Ptr<Socket>) {
  fail("connection failed (refused or timed out)");
  notify();
}

void NsTransport::on_peer_closed(Ptr<Socket>) {
  peer_closed_ = true;
  notify();
}

void NsTransport::on_reset(Ptr<Socket>) {
  fail("connection reset");
  notify();
}

void NsTransport::on_data(Ptr<Socket>) { notify(); }
void NsTransport::on_send_space(Ptr<Socket>, uint32_t) { notify(); }

void NsTransport::fail(std::string why) {
  if (status_ == TransportStatus::kClosed)
    return;  // we closed first; what follows is not our error
  status_ = TransportStatus::kError;
  error_ = std::move(why);
}

void NsTransport::detach() {
  socket_->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                              MakeNullCallback<void, Ptr<Socket>>());
  socket_->SetCloseCallbacks(MakeNullCallback<void, Ptr<Socket>>(),
                             MakeNullCallback<void, Ptr<Socket>>());
  socket_->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
  socket_->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
}

// Deferred to its own event: socket callbacks run inside ns-3's receive and transmit paths, which
// a write from the activity callback would re-enter.
void NsTransport::notify() {
  if (!*on_activity_ || notify_event_.IsRunning()) return;
  notify_event_ = ns3::Simulator::ScheduleNow([this] { (*on_activity_)(); });
}

NsTransportFactory::NsTransportFactory(Ptr<ns3::Node> node, scenario::ResolvedTcp tcp,
                                       std::uint32_t mtu_bytes, std::int64_t first_stream)
    : node_(std::move(node)), tcp_(tcp), mtu_bytes_(mtu_bytes), next_stream_(first_stream) {}

std::unique_ptr<Transport> NsTransportFactory::create() {
  return std::make_unique<NsTransport>(create_tcp_socket(node_, tcp_, mtu_bytes_, next_stream_++),
                                       on_activity_);
}

void NsTransportFactory::set_activity_callback(ActivityCallback callback) {
  *on_activity_ = std::move(callback);
}

}  // namespace tb::sim
