#include "twinbench/live/server.hpp"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <gtest/gtest.h>

namespace {

namespace asio = boost::asio;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;
using tb::live::LiveServer;
using tb::live::ServerOptions;

constexpr auto kTimeout = 10s;

// Bounds a blocking client: if it is not disarmed in time, the socket is shut down, which makes
// any blocked read or write return with an error instead of hanging the test.
class Watchdog {
 public:
  Watchdog(tcp::socket& socket, std::chrono::milliseconds limit)
      : thread_([this, &socket, limit] {
          std::unique_lock lock(mutex_);
          if (!disarmed_cv_.wait_for(lock, limit, [this] { return disarmed_; })) {
            fired_ = true;
            ::shutdown(socket.native_handle(), SHUT_RDWR);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      disarmed_ = true;
    }
    disarmed_cv_.notify_all();
    thread_.join();
    EXPECT_FALSE(fired_) << "client timed out";
  }

 private:
  std::mutex mutex_;
  std::condition_variable disarmed_cv_;
  bool disarmed_ = false;
  bool fired_ = false;
  std::thread thread_;
};

bool wait_until(const std::function<bool()>& condition,
                std::chrono::milliseconds limit = kTimeout) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

tcp::socket connect_to(asio::io_context& io, std::uint16_t port) {
  tcp::socket socket(io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  return socket;
}

std::string get(const std::string& target, const std::string& extra_headers = {}) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers + "\r\n";
}

http::response<http::string_body> request(tcp::socket& socket, boost::beast::flat_buffer& buffer,
                                          const std::string& raw_request) {
  asio::write(socket, asio::buffer(raw_request));
  http::response_parser<http::string_body> parser;
  parser.body_limit(16 * 1024 * 1024);
  http::read(socket, buffer, parser);
  return parser.release();
}

TEST(LiveServer, BindsAnEphemeralLoopbackPort) {
  LiveServer server(ServerOptions{});
  EXPECT_NE(server.port(), 0);
  EXPECT_EQ(server.base_url(), "http://127.0.0.1:" + std::to_string(server.port()));
}

TEST(LiveServer, PingAndDownloadShareOneKeepAliveConnection) {
  LiveServer server(ServerOptions{});
  server.start();

  asio::io_context io;
  tcp::socket socket = connect_to(io, server.port());
  Watchdog watchdog(socket, kTimeout);
  boost::beast::flat_buffer buffer;

  const auto ping = request(socket, buffer, get("/api/benchmark/ping/"));
  EXPECT_EQ(ping.result_int(), 200u);
  EXPECT_EQ(ping.body(), R"({"ok": true})");
  EXPECT_EQ(ping[http::field::server], "twinbench");

  const auto download = request(socket, buffer, get("/api/benchmark/download/1048576/"));
  EXPECT_EQ(download.result_int(), 200u);
  EXPECT_EQ(download[http::field::content_length], "1048576");
  ASSERT_EQ(download.body().size(), 1048576u);
  EXPECT_EQ(download.body().find_first_not_of('\0'), std::string::npos);
  EXPECT_TRUE(download.keep_alive());

  // The server counts a response once its last write completes, which may trail the client.
  EXPECT_TRUE(wait_until([&] { return server.stats().requests_served == 2; }));
  const auto stats = server.stats();
  EXPECT_EQ(stats.connections_accepted, 1u);
  EXPECT_EQ(stats.requests_served, 2u);
  EXPECT_EQ(stats.open_connections, 1u);
}

TEST(LiveServer, ConnectionCloseEndsTheConnection) {
  LiveServer server(ServerOptions{});
  server.start();

  asio::io_context io;
  tcp::socket socket = connect_to(io, server.port());
  Watchdog watchdog(socket, kTimeout);
  boost::beast::flat_buffer buffer;
  const auto ping = request(socket, buffer, get("/api/benchmark/ping/", "Connection: close\r\n"));
  EXPECT_EQ(ping.result_int(), 200u);
  EXPECT_FALSE(ping.keep_alive());

  // The server shuts down its side: the next read sees end of stream.
  std::array<char, 16> scratch{};
  boost::system::error_code ec;
  socket.read_some(asio::buffer(scratch), ec);
  EXPECT_EQ(ec, asio::error::eof);
  socket.close();
  EXPECT_TRUE(wait_until([&] { return server.stats().open_connections == 0; }));
}

TEST(LiveServer, ServesConcurrentConnections) {
  constexpr int kClients = 20;
  LiveServer server(ServerOptions{});
  server.start();

  std::atomic<int> successes{0};
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.emplace_back([&, i] {
      try {
        asio::io_context io;
        tcp::socket socket = connect_to(io, server.port());
        Watchdog watchdog(socket, kTimeout);
        boost::beast::flat_buffer buffer;
        const std::size_t size = 1000u * static_cast<std::size_t>(i + 1);
        const auto response =
            request(socket, buffer, get("/api/benchmark/download/" + std::to_string(size) + "/"));
        if (response.result_int() == 200 && response.body().size() == size) ++successes;
      } catch (const std::exception& error) {
        ADD_FAILURE() << "client " << i << ": " << error.what();
      }
    });
  }
  for (auto& client : clients) client.join();

  EXPECT_EQ(successes.load(), kClients);
  EXPECT_TRUE(wait_until([&] { return server.stats().requests_served == kClients; }));
  EXPECT_EQ(server.stats().connections_accepted, static_cast<std::uint64_t>(kClients));
}

TEST(LiveServer, StopClosesOpenConnections) {
  LiveServer server(ServerOptions{});
  server.start();

  asio::io_context io;
  tcp::socket socket = connect_to(io, server.port());
  Watchdog watchdog(socket, kTimeout);
  ASSERT_TRUE(wait_until([&] { return server.stats().open_connections == 1; }));

  server.stop();
  server.stop();  // idempotent
  EXPECT_EQ(server.stats().open_connections, 0u);
  std::array<char, 16> scratch{};
  boost::system::error_code ec;
  socket.read_some(asio::buffer(scratch), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
}

TEST(LiveServer, RunForegroundReturnsAfterStop) {
  LiveServer server(ServerOptions{});
  std::thread foreground([&] { server.run_foreground(); });

  asio::io_context io;
  {
    tcp::socket socket = connect_to(io, server.port());
    Watchdog watchdog(socket, kTimeout);
    boost::beast::flat_buffer buffer;
    EXPECT_EQ(request(socket, buffer, get("/api/benchmark/ping/")).result_int(), 200u);
  }
  // A response counts once its last write completes, which may be after the client has read it.
  EXPECT_TRUE(wait_until([&] { return server.stats().requests_served == 1; }));
  server.stop();
  foreground.join();  // returns because stop() closed everything the io_context waited on
}

TEST(LiveServer, BusyPortThrowsSystemError) {
  LiveServer first(ServerOptions{});
  ServerOptions options;
  options.port = first.port();
  EXPECT_THROW(LiveServer second(options), std::system_error);
}

TEST(LiveServer, BadBindAddressThrowsSystemError) {
  ServerOptions options;
  options.bind_address = "not an address";
  try {
    LiveServer server(options);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& error) {
    EXPECT_NE(std::string(error.what()).find("not an address"), std::string::npos) << error.what();
  }
}

TEST(LiveServer, NodelayOptionServesNormally) {
  ServerOptions options;
  options.nodelay = true;
  LiveServer server(options);
  server.start();

  asio::io_context io;
  tcp::socket socket = connect_to(io, server.port());
  Watchdog watchdog(socket, kTimeout);
  boost::beast::flat_buffer buffer;
  EXPECT_EQ(request(socket, buffer, get("/api/benchmark/download/100000/")).body().size(), 100000u);
}

namespace tb_limits {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

// How long the server took to close `socket` (the read returned end of file or a reset), bounded.
std::chrono::milliseconds time_to_close(tcp::socket& socket) {
  const auto start = std::chrono::steady_clock::now();
  std::array<char, 4096> scratch{};
  boost::system::error_code ec;
  while (!ec && std::chrono::steady_clock::now() - start < 10s)
    socket.read_some(asio::buffer(scratch), ec);
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start);
}

// The status a new client's ping gets from the server on `port` (another client, served while
// an abusive one waits).
int ping_status_of_another_client(asio::io_context& io, std::uint16_t port) {
  tcp::socket other = connect_to(io, port);
  Watchdog watchdog(other, kTimeout);
  boost::beast::flat_buffer buffer;
  return request(other, buffer, get("/api/benchmark/ping/")).result_int();
}

}  // namespace tb_limits

// A client that goes silent in the middle of its head (a slowloris that stopped) is closed after
// the idle timeout, and others are served meanwhile. One that keeps sending a byte at a time is
// ended by the head limit (431).
TEST(LiveServerLimits, ASilentConnectionIsClosedAfterTheIdleTimeoutWhileOthersAreServed) {
  ServerOptions options;
  options.idle_timeout = 300ms;
  LiveServer server(options);
  server.start();
  asio::io_context io;
  tcp::socket silent = connect_to(io, server.port());
  Watchdog silent_watchdog(silent, kTimeout);
  asio::write(silent, asio::buffer(std::string("GET /api/benchmark/ping/ HTTP/1.1\r\nHo")));
  // Another client is answered while the silent one waits.
  EXPECT_EQ(tb_limits::ping_status_of_another_client(io, server.port()), 200);
  const auto closed_after = tb_limits::time_to_close(silent);
  EXPECT_GE(closed_after, 150ms) << "not before the idle timeout (less the time already spent)";
  EXPECT_LT(closed_after, 3s) << "closed within the idle timeout and a margin";
}

// A client that never reads a large body stops the server's writes; the server closes it after
// the idle timeout instead of holding the connection and its buffers.
TEST(LiveServerLimits, AClientThatNeverReadsItsBodyIsClosedAfterTheIdleTimeout) {
  ServerOptions options;
  options.idle_timeout = 300ms;
  LiveServer server(options);
  server.start();
  asio::io_context io;
  tcp::socket stuck = connect_to(io, server.port());
  Watchdog watchdog(stuck, kTimeout);
  stuck.set_option(asio::socket_base::receive_buffer_size(4096));
  asio::write(stuck, asio::buffer(get("/api/benchmark/download/268435456/")));
  ASSERT_TRUE(wait_until([&] { return server.stats().open_connections == 1; }));
  // Nothing is read: the server's writes stall, and after the idle timeout it closes.
  EXPECT_TRUE(wait_until([&] { return server.stats().open_connections == 0; }, 5s))
      << "the stalled connection is still open";
}

// A head trickled in a byte at a time (slowloris) restarts the idle timer with every byte; the
// head timeout ends it: 408 and a close, while another client is served.
TEST(LiveServerLimits, AHeadTrickledInIsAnswered408AtTheHeadTimeout) {
  ServerOptions options;
  options.idle_timeout = 5s;
  options.head_timeout = 400ms;
  LiveServer server(options);
  server.start();
  asio::io_context io;
  tcp::socket slow = connect_to(io, server.port());
  Watchdog watchdog(slow, kTimeout);
  const std::string head = get("/api/benchmark/ping/");
  const auto start = std::chrono::steady_clock::now();
  std::size_t sent = 0;
  // One byte every 50 ms (the head would take ~2.5 s) until the server answers.
  while (slow.available() == 0 && sent < head.size() &&
         std::chrono::steady_clock::now() - start < 4s) {
    boost::system::error_code ec;
    asio::write(slow, asio::buffer(head.data() + sent, 1), ec);
    if (ec) break;
    ++sent;
    std::this_thread::sleep_for(50ms);
  }
  EXPECT_EQ(tb_limits::ping_status_of_another_client(io, server.port()), 200);
  EXPECT_LT(sent, head.size()) << "the head was never cut short";
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> response;
  boost::system::error_code ec;
  http::read(slow, buffer, response, ec);
  ASSERT_FALSE(ec) << ec.message();
  EXPECT_EQ(response.result_int(), 408);
  const auto answered = std::chrono::steady_clock::now() - start;
  EXPECT_GE(answered, 400ms);
  EXPECT_LT(answered, 2s);
  EXPECT_LT(tb_limits::time_to_close(slow), 3s);
}

// Over the connection cap, a new connection is closed at once; the open ones keep being served.
TEST(LiveServerLimits, ConnectionsOverTheCapAreClosedAtOnce) {
  ServerOptions options;
  options.max_connections = 2;
  LiveServer server(options);
  server.start();
  asio::io_context io;
  tcp::socket first = connect_to(io, server.port());
  tcp::socket second = connect_to(io, server.port());
  Watchdog first_watchdog(first, kTimeout);
  ASSERT_TRUE(wait_until([&] { return server.stats().open_connections == 2; }));
  tcp::socket third = connect_to(io, server.port());
  Watchdog third_watchdog(third, kTimeout);
  EXPECT_LT(tb_limits::time_to_close(third), 2s);
  boost::beast::flat_buffer buffer;
  EXPECT_EQ(request(first, buffer, get("/api/benchmark/ping/")).result_int(), 200);
  EXPECT_EQ(server.stats().open_connections, 2u);
}

}  // namespace
