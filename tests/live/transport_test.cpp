// AsioTransport and AsioResolver against small Asio peers on 127.0.0.1. Every wait is bounded by
// time; none asserts on speed.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "twinbench/live/asio_resolver.hpp"
#include "twinbench/live/asio_transport.hpp"
#include "twinbench/live/io_thread.hpp"

namespace tb::live {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
using Kind = ReadResult::Kind;

// Polls `pred` (sleeping briefly between tries) until it holds or `limit` passes.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = 10s) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(200us);
  }
  return pred();
}

std::vector<std::byte> pattern(std::size_t n) {
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<std::byte>(i % 251);
  return bytes;
}

// A one-connection peer on its own io thread. `on_accept` gets the accepted socket there.
class Peer {
 public:
  using Handler = std::function<void(std::shared_ptr<tcp::socket>)>;
  explicit Peer(Handler on_accept)
      : acceptor_(io_.context(), {asio::ip::make_address("127.0.0.1"), 0}) {
    port_ = acceptor_.local_endpoint().port();
    asio::post(io_.context(), [this, on_accept = std::move(on_accept)] {
      auto socket = std::make_shared<tcp::socket>(io_.context());
      acceptor_.async_accept(*socket, [this, socket, on_accept](boost::system::error_code ec) {
        if (ec) return;
        accepted_ = socket;  // kept open even if on_accept drops it, and closed before io_ ends
        on_accept(socket);
      });
    });
  }
  ~Peer() { io_.stop(); }  // before the acceptor goes away

  Endpoint endpoint() const { return {"127.0.0.1", port_}; }

 private:
  IoThread io_;
  tcp::acceptor acceptor_;
  std::shared_ptr<tcp::socket> accepted_;  // touched on io_'s thread only
  std::uint16_t port_ = 0;
};

using EchoBuffer = std::array<std::byte, 65536>;

void echo_more(std::shared_ptr<tcp::socket> socket, std::shared_ptr<EchoBuffer> buf) {
  socket->async_read_some(
      asio::buffer(*buf), [socket, buf](boost::system::error_code ec, std::size_t n) {
        if (ec) return;  // the client closed: drop the socket
        asio::async_write(*socket, asio::buffer(buf->data(), n),
                          [socket, buf](boost::system::error_code ec, std::size_t) {
                            if (!ec) echo_more(socket, buf);
                          });
      });
}

void echo(std::shared_ptr<tcp::socket> socket) {
  echo_more(std::move(socket), std::make_shared<EchoBuffer>());
}

// Sends `bytes` and then closes (FIN).
Peer::Handler send_and_close(std::vector<std::byte> bytes) {
  auto data = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  return [data](std::shared_ptr<tcp::socket> socket) {
    asio::async_write(*socket, asio::buffer(*data),
                      [socket, data](boost::system::error_code, std::size_t) {
                        boost::system::error_code ignored;
                        socket->shutdown(tcp::socket::shutdown_send, ignored);
                        socket->close(ignored);
                      });
  };
}

TEST(AsioTransport, EchoesOneMebibyte) {
  Peer peer(echo);
  IoThread io;
  AsioTransport t(io);
  EXPECT_EQ(t.status(), TransportStatus::kIdle);
  t.connect(peer.endpoint());
  ASSERT_TRUE(eventually([&] { return t.status() == TransportStatus::kConnected; })) << t.error();

  const auto sent = pattern(std::size_t{1} << 20);
  std::vector<std::byte> got;
  std::vector<std::byte> chunk(65536);
  std::size_t written = 0;
  const bool ok = eventually(
      [&] {
        written += t.write_some(std::span(sent).subspan(written));
        for (int i = 0; i < 64; ++i) {
          const ReadResult r = t.read_some(chunk);
          if (r.kind != Kind::kData) break;
          got.insert(got.end(), chunk.begin(),
                     chunk.begin() + static_cast<std::ptrdiff_t>(r.bytes));
        }
        return got.size() >= sent.size() || t.status() != TransportStatus::kConnected;
      },
      30s);
  ASSERT_TRUE(ok) << "received " << got.size();
  EXPECT_EQ(t.status(), TransportStatus::kConnected);
  EXPECT_TRUE(got == sent);

  t.close();
  EXPECT_EQ(t.status(), TransportStatus::kClosed);
  t.close();  // idempotent
  EXPECT_EQ(t.status(), TransportStatus::kClosed);
}

TEST(AsioTransport, ConnectToClosedPortFails) {
  IoThread io;
  std::uint16_t port = 0;
  {
    tcp::acceptor probe(io.context(), {asio::ip::make_address("127.0.0.1"), 0});
    port = probe.local_endpoint().port();
  }  // closed again: nothing listens there now
  AsioTransport t(io);
  t.connect({"127.0.0.1", port});
  ASSERT_TRUE(eventually([&] { return t.status() == TransportStatus::kError; }));
  EXPECT_FALSE(t.error().empty());
  std::array<std::byte, 16> buf{};
  EXPECT_EQ(t.read_some(buf).kind, Kind::kError);
  EXPECT_EQ(t.write_some(buf), 0u);
}

TEST(AsioTransport, BadAddressFails) {
  IoThread io;
  AsioTransport t(io);
  t.connect({"not-an-ip", 80});
  EXPECT_EQ(t.status(), TransportStatus::kError);
  EXPECT_NE(t.error().find("not-an-ip"), std::string::npos);
}

TEST(AsioTransport, PeerCloseGivesEofAfterDraining) {
  const std::string hello = "hello";
  std::vector<std::byte> bytes(hello.size());
  std::memcpy(bytes.data(), hello.data(), hello.size());
  Peer peer(send_and_close(bytes));
  IoThread io;
  AsioTransport t(io);
  t.connect(peer.endpoint());
  ASSERT_TRUE(eventually([&] { return t.available() == bytes.size(); })) << t.error();
  ASSERT_TRUE(eventually([&] { return t.peer_finished(); })) << "the FIN arrives";
  // FIN seen but bytes remain: still connected.
  EXPECT_EQ(t.status(), TransportStatus::kConnected);

  std::array<std::byte, 64> buf{};
  const ReadResult r = t.read_some(buf);
  ASSERT_EQ(r.kind, Kind::kData);
  ASSERT_EQ(r.bytes, bytes.size());
  EXPECT_EQ(std::memcmp(buf.data(), bytes.data(), bytes.size()), 0);
  ASSERT_TRUE(eventually([&] { return t.read_some(buf).kind == Kind::kEof; }));
  EXPECT_EQ(t.status(), TransportStatus::kClosed);
}

TEST(AsioTransport, SlowReaderBoundsTheReceiveBuffer) {
  constexpr std::size_t kTotal = std::size_t{16} << 20;
  const auto sent = pattern(kTotal);
  Peer peer(send_and_close(sent));
  IoThread io;
  AsioTransport t(io);
  const std::size_t limit = TransportOptions{}.receive_buffer_limit;
  t.connect(peer.endpoint());

  // The reader stalls: the buffer fills exactly to the limit and stays there.
  ASSERT_TRUE(eventually([&] { return t.buffered() >= limit; }, 30s)) << t.buffered();
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(t.buffered(), limit);

  // Then it drains slowly, one 64 KiB read per "frame".
  std::vector<std::byte> chunk(65536);
  std::size_t received = 0;
  std::size_t max_buffered = 0;
  bool intact = true;
  bool eof = false;
  const auto end = std::chrono::steady_clock::now() + 60s;
  for (int frame = 0; frame < 100000 && !eof && std::chrono::steady_clock::now() < end; ++frame) {
    max_buffered = std::max(max_buffered, t.buffered());
    const ReadResult r = t.read_some(chunk);
    if (r.kind == Kind::kData) {
      intact = intact && std::memcmp(chunk.data(), sent.data() + received, r.bytes) == 0;
      received += r.bytes;
    }
    eof = r.kind == Kind::kEof;
    ASSERT_NE(r.kind, Kind::kError) << t.error();
    std::this_thread::sleep_for(200us);
  }
  EXPECT_TRUE(eof);
  EXPECT_EQ(received, kTotal);
  EXPECT_TRUE(intact);
  EXPECT_LE(max_buffered, limit);
  EXPECT_EQ(t.status(), TransportStatus::kClosed);
}

TEST(AsioTransport, WriteSomeHonoursTheSendBufferLimit) {
  Peer peer([](std::shared_ptr<tcp::socket>) {});  // keeps the connection open, never reads
  IoThread io;
  AsioTransport t(
      io, TransportOptions{
              .receive_buffer_limit = 65536, .send_buffer_limit = 65536, .congestion_control = {}});
  const auto data = pattern(std::size_t{1} << 20);
  EXPECT_EQ(t.write_some(data), 0u);  // not connected yet
  t.connect(peer.endpoint());
  ASSERT_TRUE(eventually([&] { return t.status() == TransportStatus::kConnected; })) << t.error();
  EXPECT_EQ(t.write_some(data), 65536u);
}

TEST(AsioTransport, DestroyWhileOperationsArePending) {
  Peer peer([](std::shared_ptr<tcp::socket>) {});
  IoThread io;
  AsioTransportFactory factory(io);
  for (int i = 0; i < 20; ++i) {
    auto t = factory.create();
    t->connect(peer.endpoint());
    if (i % 2 == 0) {
      eventually([&] { return t->status() == TransportStatus::kConnected; }, 1s);
      const auto data = pattern(4096);
      t->write_some(data);
    }
    if (i % 3 == 0) t->close();
  }  // each destroyed with a connect, read or write in flight
  AsioTransport idle(io);
  std::array<std::byte, 4> buf{};
  EXPECT_EQ(idle.read_some(buf).kind, Kind::kWouldBlock);
}

TEST(AsioResolver, LiteralsResolveAtOnce) {
  IoThread io;
  AsioResolver r(io);
  const auto v4 = r.start("127.0.0.1");
  EXPECT_EQ(r.status(v4), Resolver::Status::kDone);
  EXPECT_EQ(r.address(v4), "127.0.0.1");
  const auto v6 = r.start("::1");
  EXPECT_EQ(r.status(v6), Resolver::Status::kDone);
  EXPECT_EQ(r.address(v6), "::1");
  r.forget(v4);
  EXPECT_EQ(r.status(v4), Resolver::Status::kFailed);  // unknown ids read as failed
}

TEST(AsioResolver, ResolvesLocalhostPreferringIpv4) {
  IoThread io;
  AsioResolver r(io);
  const auto id = r.start("localhost");
  ASSERT_TRUE(eventually([&] { return r.status(id) != Resolver::Status::kWaiting; }, 30s));
  ASSERT_EQ(r.status(id), Resolver::Status::kDone);
  EXPECT_EQ(r.address(id), "127.0.0.1");
}

TEST(AsioResolver, UnknownNameFails) {
  IoThread io;
  AsioResolver r(io);
  const auto id = r.start("no-such-host.invalid");
  ASSERT_TRUE(eventually([&] { return r.status(id) != Resolver::Status::kWaiting; }, 60s));
  EXPECT_EQ(r.status(id), Resolver::Status::kFailed);
  EXPECT_EQ(r.address(id), "");
  const auto pending = r.start("no-such-host-2.invalid");
  r.forget(pending);  // the late answer is dropped
}

}  // namespace
}  // namespace tb::live
