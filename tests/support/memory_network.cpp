#include "support/memory_network.hpp"

#include <algorithm>

namespace tb::testing {

namespace {

// One direction of a link: serializes bytes at the rate, then delays them.
struct Pipe {
  Time free_at{0};
  Time delivery_time(Time now, std::size_t bytes, const LinkConfig& link) {
    Time start = std::max(now, free_at);
    Duration tx{0};
    if (link.bytes_per_second > 0) {
      tx = Duration(
          static_cast<std::int64_t>(static_cast<double>(bytes) * 1e9 / link.bytes_per_second));
    }
    free_at = start + tx;
    return free_at + link.one_way_delay;
  }
};

struct Connection : std::enable_shared_from_this<Connection>, PeerSocket {
  VirtualScheduler* scheduler = nullptr;
  LinkConfig link;
  std::unique_ptr<Peer> peer;
  Pipe to_server, to_client;
  // Client side state.
  TransportStatus status = TransportStatus::kIdle;
  std::vector<std::byte> received;
  std::size_t received_begin = 0;
  bool eof = false;
  bool client_closed = false;
  bool server_closed = false;
  std::string error;

  void send(std::span<const std::byte> data) override {
    if (server_closed) return;
    std::vector<std::byte> copy(data.begin(), data.end());
    const Time at = to_client.delivery_time(scheduler->now(), copy.size(), link);
    scheduler->schedule_at(at, [self = shared_from_this(), copy = std::move(copy)] {
      if (self->client_closed) return;
      self->received.insert(self->received.end(), copy.begin(), copy.end());
    });
  }
  void close() override {
    if (server_closed) return;
    server_closed = true;
    const Time at = to_client.delivery_time(scheduler->now(), 0, link);
    scheduler->schedule_at(at, [self = shared_from_this()] { self->eof = true; });
  }
};

class MemoryTransport : public Transport {
 public:
  MemoryTransport(VirtualScheduler& scheduler, LinkConfig link,
                  std::function<std::unique_ptr<Peer>()> make_peer,
                  std::shared_ptr<std::uint64_t> accepted)
      : make_peer_(std::move(make_peer)), accepted_(std::move(accepted)) {
    c_ = std::make_shared<Connection>();
    c_->scheduler = &scheduler;
    c_->link = link;
  }
  ~MemoryTransport() override { close(); }

  void connect(const Endpoint&) override {
    c_->status = TransportStatus::kConnecting;
    auto& s = *c_->scheduler;
    if (c_->link.connect_at_once && c_->link.one_way_delay == Duration{0}) {
      c_->peer = make_peer_();
      if (!c_->peer) {
        c_->status = TransportStatus::kError;
        c_->error = "connection refused";
        return;
      }
      ++*accepted_;
      c_->peer->on_connect(*c_);
      c_->status = TransportStatus::kConnected;
      return;
    }
    // SYN reaches the server after one delay; SYN-ACK comes back after another.
    s.schedule_in(c_->link.one_way_delay, [c = c_, make = make_peer_, accepted = accepted_] {
      c->peer = make();
      if (!c->peer) {
        c->scheduler->schedule_in(c->link.one_way_delay, [c] {
          c->status = TransportStatus::kError;
          c->error = "connection refused";
        });
        return;
      }
      ++*accepted;
      c->peer->on_connect(*c);
      c->scheduler->schedule_in(c->link.one_way_delay, [c] {
        if (c->status == TransportStatus::kConnecting) c->status = TransportStatus::kConnected;
      });
    });
  }
  TransportStatus status() override {
    if (c_->status == TransportStatus::kConnected && c_->eof && available() == 0)
      return TransportStatus::kClosed;
    return c_->status;
  }
  std::size_t write_some(std::span<const std::byte> data) override {
    if (c_->status != TransportStatus::kConnected || c_->server_closed) return 0;
    std::vector<std::byte> copy(data.begin(), data.end());
    const Time at = c_->to_server.delivery_time(c_->scheduler->now(), copy.size(), c_->link);
    c_->scheduler->schedule_at(at, [c = c_, copy = std::move(copy)] {
      if (c->peer && !c->server_closed) c->peer->on_data(*c, copy);
    });
    return data.size();
  }
  ReadResult read_some(std::span<std::byte> out) override {
    if (c_->status == TransportStatus::kError) return {ReadResult::Kind::kError, 0};
    const std::size_t n = std::min(out.size(), available());
    if (n == 0) return {c_->eof ? ReadResult::Kind::kEof : ReadResult::Kind::kWouldBlock, 0};
    std::copy_n(c_->received.begin() + static_cast<std::ptrdiff_t>(c_->received_begin), n,
                out.begin());
    c_->received_begin += n;
    if (c_->received_begin == c_->received.size()) c_->received.clear(), c_->received_begin = 0;
    return {ReadResult::Kind::kData, n};
  }
  std::size_t available() override { return c_->received.size() - c_->received_begin; }
  void close() override {
    if (c_->client_closed) return;
    c_->client_closed = true;
    if (c_->status == TransportStatus::kConnected || c_->status == TransportStatus::kConnecting)
      c_->status = TransportStatus::kClosed;
    c_->scheduler->schedule_in(c_->link.one_way_delay, [c = c_] {
      if (c->peer && !c->server_closed) c->peer->on_client_closed(*c);
      c->server_closed = true;
      c->peer.reset();
    });
  }
  std::string error() const override { return c_->error; }

 private:
  std::shared_ptr<Connection> c_;
  std::function<std::unique_ptr<Peer>()> make_peer_;
  std::shared_ptr<std::uint64_t> accepted_;
};

class ServerPeer : public Peer {
 public:
  ServerPeer(std::shared_ptr<std::uint64_t> requests, servercore::ServerConfig config,
             const std::shared_ptr<const servercore::TlsServerContext>& tls)
      : requests_(std::move(requests)), core_(servercore::make_connection(config, tls)) {}
  void on_data(PeerSocket& socket, std::span<const std::byte> data) override {
    core_->on_receive(data);
    flush(socket);
  }
  void on_client_closed(PeerSocket& socket) override {
    core_->on_peer_closed();
    flush(socket);
  }

 private:
  void flush(PeerSocket& socket) {
    for (auto w = core_->next_write(); !w.empty(); w = core_->next_write()) {
      socket.send(w);
      core_->write_done();
    }
    if (requests_) *requests_ += core_->requests_served() - counted_;
    counted_ = core_->requests_served();
    if (core_->should_close()) socket.close();
  }
  std::shared_ptr<std::uint64_t> requests_;
  std::unique_ptr<servercore::Connection> core_;
  std::uint64_t counted_ = 0;
};

class ScriptedPeer : public Peer {
 public:
  ScriptedPeer(std::string reply, bool close_after)
      : reply_(std::move(reply)), close_after_(close_after) {}
  void on_data(PeerSocket& socket, std::span<const std::byte>) override {
    if (answered_) return;
    answered_ = true;
    socket.send(std::as_bytes(std::span(reply_)));
    if (close_after_) socket.close();
  }

 private:
  std::string reply_;
  bool close_after_;
  bool answered_ = false;
};

}  // namespace

MemoryNetwork::MemoryNetwork(VirtualScheduler& scheduler, LinkConfig link,
                             std::function<std::unique_ptr<Peer>()> make_peer)
    : scheduler_(scheduler), link_(link), make_peer_(std::move(make_peer)) {}

std::unique_ptr<Transport> MemoryNetwork::create() {
  return std::make_unique<MemoryTransport>(scheduler_, link_, make_peer_, accepted_);
}

std::function<std::unique_ptr<Peer>()> server_peers(
    std::shared_ptr<std::uint64_t> requests, servercore::ServerConfig config,
    std::shared_ptr<const servercore::TlsServerContext> tls) {
  return [requests, config, tls] { return std::make_unique<ServerPeer>(requests, config, tls); };
}

std::function<std::unique_ptr<Peer>()> scripted_peers(std::string reply, bool close_after) {
  return [reply, close_after] { return std::make_unique<ScriptedPeer>(reply, close_after); };
}

}  // namespace tb::testing
