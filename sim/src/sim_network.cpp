#include "twinbench/sim/sim_network.hpp"

#include <ns3/application.h>
#include <ns3/random-variable-stream.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>
#include <ns3/drop-tail-queue.h>
#include <ns3/error-model.h>
#include <ns3/inet-socket-address.h>
#include <ns3/internet-stack-helper.h>
#include <ns3/ipv4.h>
#include <ns3/mac48-address.h>
#include <ns3/node-container.h>
#include <ns3/packet.h>
#include <ns3/point-to-point-channel.h>
#include <ns3/point-to-point-helper.h>
#include <ns3/point-to-point-net-device.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "twinbench/link/link_direction.hpp"
#include "twinbench/scenario/seeds.hpp"
#include "twinbench/sim/linux_tcp_socket.hpp"

namespace tb::sim {

using ns3::Ptr;

namespace {

constexpr const char* kClientAddress = "10.0.0.1";

// Fixed random stream numbers, so results do not depend on how many random variables earlier
// simulations in the process created.
constexpr std::int64_t kLossStream = 1;    // +0 downlink, +1 uplink
constexpr std::int64_t kJitterStream = 3;  // +0 downlink, +1 uplink
constexpr std::int64_t kServerSocketStream = 5;
constexpr std::int64_t kInternetStackStream = 10;
constexpr std::int64_t kClientSocketStream = 1000;  // one per client socket

// A link that changes over time: the devices' rate and queue, so that they only hand packets to
// the link model (a 1500-byte packet takes 12 ns).
constexpr double kHandOverMbps = 1e6;
constexpr std::uint32_t kHandOverQueuePackets = 1'000'000;

ns3::Time from_ms(double ms) { return ns3::NanoSeconds(std::llround(ms * 1e6)); }

// A point-to-point channel whose two directions have their own one-way delay and jitter. Jitter
// is uniform in [0, jitter] per packet, but a packet never arrives before its predecessor in the
// same direction (a path does not reorder).
class PathChannel : public ns3::PointToPointChannel {
 public:
  struct Direction {
    ns3::Time delay;
    ns3::Time jitter;
    Ptr<ns3::UniformRandomVariable> random;
    ns3::Time last_arrival;
    std::optional<link::LinkDirection> model;
  };

  // Direction 0 carries packets from the first attached device, direction 1 from the second.
  void set_direction(int wire, ns3::Time delay, ns3::Time jitter, std::int64_t stream) {
    Direction& d = directions_[static_cast<std::size_t>(wire)];
    d.delay = delay;
    d.jitter = jitter;
    d.random = ns3::CreateObject<ns3::UniformRandomVariable>();
    d.random->SetStream(stream);
  }

  // A link that changes over time: this direction's queue, deliveries, delay and loss are the
  // sans-IO link model's (link/), which the emulated path runs too; the devices only hand their
  // packets over.
  void set_model(int wire, const link::DirectionConfig& config) {
    directions_[static_cast<std::size_t>(wire)].model.emplace(config);
  }

  bool TransmitStart(Ptr<const ns3::Packet> p, Ptr<ns3::PointToPointNetDevice> src,
                     ns3::Time tx_time) override {
    const int wire = src == GetSource(0) ? 0 : 1;
    Direction& d = directions_[static_cast<std::size_t>(wire)];
    if (d.model) {
      // The packet reaches the bottleneck now; its size there is the IP packet's (the model adds
      // the PPP header, which the device's packet already has).
      const link::Verdict v = d.model->offer(ns3::Simulator::Now().GetNanoSeconds(),
                                             p->GetSize() - link::kLinkHeaderBytes);
      if (v.fate == link::Fate::kDelivered) {
        Ptr<ns3::PointToPointNetDevice> dst = GetDestination(static_cast<uint32_t>(wire));
        ns3::Simulator::ScheduleWithContext(dst->GetNode()->GetId(),
                                            ns3::NanoSeconds(v.due_ns) - ns3::Simulator::Now(),
                                            &ns3::PointToPointNetDevice::Receive, dst, p->Copy());
      }
      return true;
    }
    ns3::Time arrival = ns3::Simulator::Now() + tx_time + d.delay;
    if (d.jitter.IsStrictlyPositive())
      arrival += ns3::NanoSeconds(
          std::llround(d.random->GetValue(0, static_cast<double>(d.jitter.GetNanoSeconds()))));
    arrival = std::max(arrival, d.last_arrival);
    d.last_arrival = arrival;
    Ptr<ns3::PointToPointNetDevice> dst = GetDestination(static_cast<uint32_t>(wire));
    ns3::Simulator::ScheduleWithContext(dst->GetNode()->GetId(), arrival - ns3::Simulator::Now(),
                                        &ns3::PointToPointNetDevice::Receive, dst, p->Copy());
    return true;
  }

 private:
  std::array<Direction, 2> directions_;
};

// A token-bucket policer on a device's receive side: a packet that finds fewer tokens than its
// size is dropped. Tokens accrue at `rate` up to `burst` bytes; the bucket starts full. Random
// loss, when the link has it, applies to the packets the policer lets through.
class PolicerErrorModel : public ns3::ErrorModel {
 public:
  PolicerErrorModel(double mbps, std::uint64_t burst_bytes, Ptr<ns3::ErrorModel> then)
      : bytes_per_ns_(mbps * 1e6 / 8 / 1e9),
        burst_(static_cast<double>(burst_bytes)),
        tokens_(burst_),
        then_(std::move(then)) {}

 private:
  bool DoCorrupt(Ptr<ns3::Packet> p) override {
    const ns3::Time now = ns3::Simulator::Now();
    tokens_ = std::min(
        burst_, tokens_ + static_cast<double>((now - last_).GetNanoSeconds()) * bytes_per_ns_);
    last_ = now;
    const double size = p->GetSize();
    if (size > tokens_) return true;
    tokens_ -= size;
    return then_ && then_->IsCorrupt(p);
  }
  void DoReset() override {
    tokens_ = burst_;
    last_ = ns3::Simulator::Now();
  }

  double bytes_per_ns_;
  double burst_;
  double tokens_;
  ns3::Time last_;
  Ptr<ns3::ErrorModel> then_;
};

struct Policer {
  double mbps = 0;  // 0: none
  std::uint64_t burst_bytes = 0;
};

Ptr<ns3::PointToPointNetDevice> add_device(Ptr<ns3::Node> node, double mbps,
                                           const scenario::QueueLimit& queue, std::uint32_t mtu,
                                           double loss_rate, std::int64_t loss_stream,
                                           const Policer& policer = {}) {
  auto device = ns3::CreateObject<ns3::PointToPointNetDevice>();
  device->SetAddress(ns3::Mac48Address::Allocate());
  device->SetDataRate(ns3::DataRate(static_cast<std::uint64_t>(std::llround(mbps * 1e6))));
  device->SetMtu(static_cast<uint16_t>(mtu));
  auto tx_queue = ns3::CreateObject<ns3::DropTailQueue<ns3::Packet>>();
  tx_queue->SetMaxSize(
      queue.packets > 0
          ? ns3::QueueSize(ns3::QueueSizeUnit::PACKETS, queue.packets)
          : ns3::QueueSize(ns3::QueueSizeUnit::BYTES, static_cast<uint32_t>(queue.bytes)));
  device->SetQueue(tx_queue);
  Ptr<ns3::ErrorModel> receive_errors;
  if (loss_rate > 0) {
    auto loss = ns3::CreateObject<ns3::RateErrorModel>();
    loss->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
    loss->SetRate(loss_rate);
    loss->AssignStreams(loss_stream);
    receive_errors = loss;
  }
  if (policer.mbps > 0)
    receive_errors =
        ns3::CreateObject<PolicerErrorModel>(policer.mbps, policer.burst_bytes, receive_errors);
  if (receive_errors) device->SetReceiveErrorModel(receive_errors);
  node->AddDevice(device);
  return device;
}

void add_address(Ptr<ns3::Node> node, Ptr<ns3::NetDevice> device, const char* address) {
  auto ipv4 = node->GetObject<ns3::Ipv4>();
  const auto interface = static_cast<uint32_t>(ipv4->AddInterface(device));
  ipv4->AddAddress(interface, ns3::Ipv4InterfaceAddress(ns3::Ipv4Address(address),
                                                        ns3::Ipv4Mask("255.255.255.0")));
  ipv4->SetUp(interface);
}

// The server core on one accepted socket. Each pending span goes out in one Send when the send
// buffer takes it whole (the head in one write, the body in write_slice writes: Nagle sees the
// same writes as with a real server); the rest follows from the send callback. A response waits
// `think` after its request; the first handshake flight waits `handshake_cpu`.
class ServedConnection {
 public:
  ServedConnection(Ptr<ns3::Socket> socket, const tb::servercore::ServerConfig& config,
                   const SimTls& tls, ns3::Time think, std::uint64_t& requests_served)
      : socket_(std::move(socket)),
        core_(tb::servercore::make_connection(config, tls.context)),
        think_(think),
        handshake_cpu_(from_ms(tls.handshake_cpu_ms)),
        requests_served_(requests_served) {
    socket_->SetRecvCallback(ns3::MakeCallback(&ServedConnection::on_data, this));
    socket_->SetSendCallback(ns3::MakeCallback(&ServedConnection::on_send_space, this));
    socket_->SetCloseCallbacks(ns3::MakeCallback(&ServedConnection::on_peer_closed, this),
                               ns3::MakeCallback(&ServedConnection::on_reset, this));
  }

  std::uint64_t retransmission_timeouts() const {
    return ns3::DynamicCast<LinuxTcpSocket>(socket_)->retransmission_timeouts();  // forked from ours
  }
  ~ServedConnection() {
    think_event_.Cancel();
    flush_event_.Cancel();
    socket_->SetRecvCallback(ns3::MakeNullCallback<void, Ptr<ns3::Socket>>());
    socket_->SetSendCallback(ns3::MakeNullCallback<void, Ptr<ns3::Socket>, uint32_t>());
    socket_->SetCloseCallbacks(ns3::MakeNullCallback<void, Ptr<ns3::Socket>>(),
                               ns3::MakeNullCallback<void, Ptr<ns3::Socket>>());
  }
  ServedConnection(const ServedConnection&) = delete;
  ServedConnection& operator=(const ServedConnection&) = delete;

 private:
  void on_data(Ptr<ns3::Socket>) {
    drained_ = false;
    const bool handshaking = core_->handshaking();
    const bool was_idle = core_->next_write().empty();
    std::vector<std::byte> bytes;
    while (Ptr<ns3::Packet> p = socket_->Recv()) {
      if (p->GetSize() == 0) break;
      bytes.resize(p->GetSize());
      p->CopyData(reinterpret_cast<uint8_t*>(bytes.data()), p->GetSize());
      core_->on_receive(bytes);
    }
    const ns3::Time delay = !handshaking ? think_ : first_flight_ ? handshake_cpu_ : ns3::Time(0);
    if (handshaking) first_flight_ = false;
    if (was_idle && !core_->next_write().empty() && delay.IsStrictlyPositive()) {
      think_event_ = ns3::Simulator::Schedule(delay, &ServedConnection::flush, this);
      return;
    }
    flush();
  }
  // Runs inside the socket's transmit loop, where writing would re-enter it. Once the core ran out
  // of bytes, a flush finds none until the core hears from its peer: no event then (one per ACK
  // otherwise; the other events keep their order).
  void on_send_space(Ptr<ns3::Socket>, uint32_t) {
    if (!closed_ && !drained_ && !flush_event_.IsRunning())
      flush_event_ = ns3::Simulator::ScheduleNow(&ServedConnection::flush, this);
  }
  void on_peer_closed(Ptr<ns3::Socket>) {
    drained_ = false;
    core_->on_peer_closed();
    flush();
  }
  void on_reset(Ptr<ns3::Socket>) { closed_ = true; }

  void flush() {
    if (closed_ || think_event_.IsRunning()) return;
    drained_ = false;
    for (auto write = core_->next_write();; write = core_->next_write()) {
      if (write.empty()) {
        drained_ = true;
        break;
      }
      const auto rest = write.subspan(written_);
      const auto n =
          static_cast<uint32_t>(std::min<std::size_t>(rest.size(), socket_->GetTxAvailable()));
      if (n == 0) break;
      const int sent = socket_->Send(
          core_->next_write_is_zeros()
              ? ns3::Create<ns3::Packet>(n)  // n zero bytes, not held in memory
              : ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(rest.data()), n));
      if (sent <= 0) break;
      written_ += static_cast<std::size_t>(sent);
      if (written_ < write.size()) break;
      written_ = 0;
      core_->write_done();
    }
    requests_served_ += core_->requests_served() - counted_;
    counted_ = core_->requests_served();
    if (core_->should_close()) {
      socket_->Close();  // FIN after the buffered bytes
      closed_ = true;
    }
  }

  Ptr<ns3::Socket> socket_;
  std::unique_ptr<tb::servercore::Connection> core_;
  ns3::Time think_;
  ns3::Time handshake_cpu_;
  bool first_flight_ = true;
  std::uint64_t& requests_served_;
  std::uint64_t counted_ = 0;
  std::size_t written_ = 0;  // bytes of the current span already sent
  ns3::EventId think_event_;
  ns3::EventId flush_event_;
  bool closed_ = false;
  bool drained_ = false;  // the last flush emptied the core, which has had no input since
};

}  // namespace

// The benchmark server on the server node: listens, and runs a ServedConnection per accepted
// socket.
class BenchmarkServerApp : public ns3::Application {
 public:
  BenchmarkServerApp(const scenario::ResolvedTcp& tcp, std::uint32_t mtu,
                     tb::servercore::ServerConfig config, SimTls tls, ns3::Time think)
      : tcp_(tcp), mtu_(mtu), config_(config), tls_(std::move(tls)), think_(think) {}

  std::uint64_t connections_accepted() const { return accepted_; }
  std::uint64_t requests_served() const { return requests_served_; }
  std::uint64_t retransmission_timeouts() const {
    std::uint64_t n = 0;
    for (const auto& c : connections_) n += c->retransmission_timeouts();
    return n;
  }

 private:
  void StartApplication() override {
    listener_ = create_tcp_socket(GetNode(), tcp_, mtu_, kServerSocketStream);
    listener_->Bind(ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), SimNetwork::kServerPort));
    listener_->Listen();
    listener_->SetAcceptCallback(
        ns3::MakeNullCallback<bool, Ptr<ns3::Socket>, const ns3::Address&>(),
        ns3::MakeCallback(&BenchmarkServerApp::on_accept, this));
  }
  void StopApplication() override {
    if (listener_) listener_->Close();
  }
  void DoDispose() override {
    connections_.clear();
    listener_ = nullptr;
    ns3::Application::DoDispose();
  }
  void on_accept(Ptr<ns3::Socket> socket, const ns3::Address&) {
    ++accepted_;
    connections_.push_back(
        std::make_unique<ServedConnection>(socket, config_, tls_, think_, requests_served_));
  }

  scenario::ResolvedTcp tcp_;
  std::uint32_t mtu_;
  tb::servercore::ServerConfig config_;
  SimTls tls_;
  ns3::Time think_;
  Ptr<LinuxTcpSocket> listener_;
  std::vector<std::unique_ptr<ServedConnection>> connections_;
  std::uint64_t accepted_ = 0;
  std::uint64_t requests_served_ = 0;
};

SimNetwork::SimNetwork(const twinbench::Network& config, std::uint64_t seed,
                       tb::servercore::ServerConfig server, SimTls tls)
    : link_(scenario::resolve(config.link())) {
  const scenario::ResolvedTcp client_tcp = scenario::resolve(config.client_tcp());
  const scenario::ResolvedTcp server_tcp = scenario::resolve(config.server_tcp());
  if (!(config.server_think_ms() >= 0))
    throw std::invalid_argument("network.server_think_ms: negative");
  ns3::RngSeedManager::SetSeed(1);
  ns3::RngSeedManager::SetRun(seed);

  client_ = ns3::CreateObject<ns3::Node>();
  server_ = ns3::CreateObject<ns3::Node>();
  ns3::NodeContainer nodes(client_, server_);
  ns3::InternetStackHelper internet;
  internet.Install(nodes);
  internet.AssignStreams(nodes, kInternetStackStream);

  auto channel = ns3::CreateObject<PathChannel>();
  Ptr<ns3::PointToPointNetDevice> client_device;
  Ptr<ns3::PointToPointNetDevice> server_device;
  if (!link_.varies_over_time()) {
    // Each device's transmit queue is the bottleneck queue of its direction; its receive error
    // model drops the other direction's packets.
    client_device = add_device(client_, link_.uplink_mbps, link_.uplink_queue, link_.mtu_bytes,
                               link_.loss_rate, kLossStream + 0,
                               {link_.downlink_policer_mbps, link_.downlink_policer_burst_bytes});
    server_device = add_device(server_, link_.downlink_mbps, link_.downlink_queue, link_.mtu_bytes,
                               link_.loss_rate, kLossStream + 1);
    client_device->Attach(channel);
    server_device->Attach(channel);
    channel->set_direction(0, from_ms(link_.client_to_server_delay_ms), from_ms(link_.jitter_ms),
                           kJitterStream + 1);
    channel->set_direction(1, from_ms(link_.server_to_client_delay_ms), from_ms(link_.jitter_ms),
                           kJitterStream + 0);
  } else {
    // The link model is the bottleneck: the devices pass packets on at once, with room for any
    // burst, and the model decides each packet's fate. Its random streams come from the seed.
    const scenario::QueueLimit unbounded{kHandOverQueuePackets, 0};
    client_device = add_device(client_, kHandOverMbps, unbounded, link_.mtu_bytes, 0, 0);
    server_device = add_device(server_, kHandOverMbps, unbounded, link_.mtu_bytes, 0, 0);
    client_device->Attach(channel);
    server_device->Attach(channel);
    channel->set_model(0, link::uplink_of(link_, scenario::splitmix64(seed)));
    channel->set_model(1, link::downlink_of(link_, scenario::splitmix64(seed)));
  }
  add_address(client_, client_device, kClientAddress);
  add_address(server_, server_device, kServerAddress);
  client_device_ = client_device;
  server_device_ = server_device;

  if (!(tls.handshake_cpu_ms >= 0)) throw std::invalid_argument("tls.handshake_cpu_ms: negative");
  server_app_ = ns3::CreateObject<BenchmarkServerApp>(
      server_tcp, link_.mtu_bytes, server, std::move(tls), from_ms(config.server_think_ms()));
  server_->AddApplication(server_app_);
  server_app_->SetStartTime(ns3::Seconds(0));
  client_transports_ = std::make_unique<NsTransportFactory>(client_, client_tcp, link_.mtu_bytes,
                                                            kClientSocketStream);
}

SimNetwork::~SimNetwork() = default;

void SimNetwork::capture(const std::string& prefix) {
  ns3::PointToPointHelper pcap;
  pcap.EnablePcap(prefix + "-client.pcap", client_device_, false, true);
  pcap.EnablePcap(prefix + "-server.pcap", server_device_, false, true);
}

std::string SimNetwork::server_address() const { return kServerAddress; }
std::uint16_t SimNetwork::server_port() const { return SimNetwork::kServerPort; }
std::uint64_t SimNetwork::connections_accepted() const {
  return server_app_->connections_accepted();
}
std::uint64_t SimNetwork::requests_served() const { return server_app_->requests_served(); }
std::uint64_t SimNetwork::server_retransmission_timeouts() const {
  return server_app_->retransmission_timeouts();
}

}  // namespace tb::sim
