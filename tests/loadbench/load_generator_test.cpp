// The live load generator against servers of known behaviour: a server answering each request a
// fixed delay after the previous answer (latency and throughput accounting), misbehaving servers
// (errors counted, the run still ends), and the real server under both io-models.
#include "twinbench/loadbench/load_generator.hpp"

#include <gtest/gtest.h>

#include <csignal>

#include <sys/wait.h>

#include <chrono>
#include <deque>
#include <numeric>
#include <thread>

#include <boost/asio.hpp>

#include "twinbench/live/server.hpp"
#include "twinbench/loadbench/server_process.hpp"
#include "twinbench/servercore/tls_certs.hpp"

namespace tb {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Serves fixed-size requests one at a time per connection: each answer (`reply`, or the echo of
// the request's last `echo_bytes`) goes out `delay` after the request arrived or the previous
// answer went, whichever is later. `reply` "": echo. `close_at_once`: accept and close.
class ScriptedServer {
 public:
  struct Script {
    std::size_t request_bytes = 0;  // 0: answer on the first read, whatever it holds
    std::chrono::milliseconds delay{0};
    std::string reply;  // the whole response to every request
    bool close_at_once = false;
  };
  explicit ScriptedServer(Script script)
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}), script_(std::move(script)) {
    accept();
    thread_ = std::thread([this] { io_.run_for(60s); });
  }
  ~ScriptedServer() {
    io_.stop();
    thread_.join();
  }
  Url url() const { return *parse_url("http://127.0.0.1:" + std::to_string(port()) + "/"); }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  struct Conn {
    explicit Conn(asio::io_context& io) : socket(io), timer(io) {}
    tcp::socket socket;
    asio::steady_timer timer;
    std::array<char, 65536> buffer{};
    std::size_t partial = 0;  // bytes of the next request received so far
    std::size_t queued = 0;   // complete requests not yet answered
    bool answering = false;
  };

  void accept() {
    acceptor_.async_accept([this](error_code ec, tcp::socket socket) {
      if (ec) return;
      auto c = std::make_shared<Conn>(io_);
      c->socket = std::move(socket);
      if (script_.close_at_once)
        c->socket.close();
      else
        read(c);
      accept();
    });
  }
  void read(const std::shared_ptr<Conn>& c) {
    c->socket.async_read_some(asio::buffer(c->buffer), [this, c](error_code ec, std::size_t n) {
      if (ec) return;
      if (script_.request_bytes == 0) {
        ++c->queued;
      } else {
        c->partial += n;
        c->queued += c->partial / script_.request_bytes;
        c->partial %= script_.request_bytes;
      }
      answer_next(c);
      read(c);
    });
  }
  void answer_next(const std::shared_ptr<Conn>& c) {
    if (c->answering || c->queued == 0) return;
    c->answering = true;
    c->timer.expires_after(script_.delay);
    c->timer.async_wait([this, c](error_code ec) {
      if (ec) return;
      asio::async_write(c->socket, asio::buffer(script_.reply), [this, c](error_code, std::size_t) {
        --c->queued;
        c->answering = false;
        answer_next(c);
      });
    });
  }

  asio::io_context io_;
  tcp::acceptor acceptor_;
  Script script_;
  std::thread thread_;
};

const std::string kBody = "0123456789";
const std::string kRequest = loadbench::format_load_request("POST", "/echo", "127.0.0.1", kBody);
const std::string kReply = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n" + kBody;

loadbench::LoadOptions options(const Url& url, unsigned clients, unsigned window) {
  loadbench::LoadOptions o;
  o.server = url;
  o.requests = std::make_shared<const std::vector<loadbench::LoadRequest>>(
      std::vector<loadbench::LoadRequest>{{kRequest, kBody, std::nullopt}});
  o.clients = clients;
  o.window = window;
  o.warmup = 150ms;
  o.duration = 500ms;
  return o;
}

double seconds(std::chrono::nanoseconds d) { return std::chrono::duration<double>(d).count(); }
double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

TEST(LoadGenerator, PipelinedLatencyAndThroughputFollowAServerOfKnownDelay) {
  constexpr auto kDelay = 10ms;
  constexpr unsigned kWindow = 4;
  ScriptedServer server({kRequest.size(), kDelay, kReply});
  const auto m = loadbench::run_load(options(server.url(), 1, kWindow));
  EXPECT_EQ(m.error_count(), 0u);
  ASSERT_GT(m.latencies_ms.size(), 5u);
  // One answer per delay at most: the throughput cannot exceed 1/delay (+1 at the edges).
  const double rps = static_cast<double>(m.latencies_ms.size()) / seconds(m.measured);
  EXPECT_LE(rps, (1.0 / 0.010) + 1.0 / seconds(m.measured));
  // No answer comes sooner than the server's delay after its request.
  EXPECT_GE(m.latencies_ms.front(), 0.99 * 10.0);
  // Little's law: requests in flight (never more than the window) = throughput x mean latency.
  // The generator keeps the window full but for its own reaction time (microseconds against the
  // 10 ms delay, more on a loaded machine), so on average more than half of it is in flight.
  const double in_flight = rps * mean(m.latencies_ms) / 1000.0;
  EXPECT_LE(in_flight, kWindow * 1.05);
  EXPECT_GE(in_flight, kWindow * 0.5);
  EXPECT_EQ(m.body_bytes, m.latencies_ms.size() * kBody.size());
}

TEST(LoadGenerator, ConnectionsAreIndependent) {
  ScriptedServer server({kRequest.size(), 10ms, kReply});
  const auto m = loadbench::run_load(options(server.url(), 3, 1));
  EXPECT_EQ(m.error_count(), 0u);
  EXPECT_EQ(m.connections_opened, 3u);
  const double rps = static_cast<double>(m.latencies_ms.size()) / seconds(m.measured);
  EXPECT_LE(rps, 3 * 100.0 + 3.0 / seconds(m.measured));
  EXPECT_GT(rps, 100.0);  // more than one connection's worth: they do not wait for each other
  EXPECT_GE(m.latencies_ms.front(), 9.9);
}

// A misbehaving server: the run ends on time, counts errors, records no response.
void expect_errors(const ScriptedServer::Script& script, const std::string& kind) {
  ScriptedServer server(script);
  const auto started = std::chrono::steady_clock::now();
  const auto m = loadbench::run_load(options(server.url(), 2, 4));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_TRUE(m.latencies_ms.empty());
  EXPECT_GE(m.errors.count(kind) ? m.errors.at(kind) : 0, 2u) << kind;
}

TEST(LoadGenerator, GarbageIsAResponseError) {
  expect_errors({0, 0ms, "SPDY/9 nonsense\r\n\r\n"}, "response");
}

TEST(LoadGenerator, WrongEchoIsAResponseError) {
  expect_errors({kRequest.size(), 0ms, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n9876543210"},
                "response");
}

TEST(LoadGenerator, ServerClosingIsCounted) { expect_errors({0, 0ms, "", true}, "closed"); }

TEST(LoadGenerator, RefusedConnectionsAreCounted) {
  std::uint16_t port = 0;
  {
    ScriptedServer gone({0, 0ms, ""});
    port = gone.port();
  }  // closed: nothing listens there now
  const auto m =
      loadbench::run_load(options(*parse_url("http://127.0.0.1:" + std::to_string(port)), 2, 1));
  EXPECT_TRUE(m.latencies_ms.empty());
  EXPECT_GE(m.errors.at("connect"), 2u);
}

TEST(LoadGenerator, StalledServerEndsTheRunWithoutResponses) {
  ScriptedServer server({kRequest.size(), 60s, kReply});
  const auto started = std::chrono::steady_clock::now();
  const auto m = loadbench::run_load(options(server.url(), 2, 2));
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10s);
  EXPECT_TRUE(m.latencies_ms.empty());
  EXPECT_EQ(m.connections_opened, 2u);
}

// The real server under each io-model serves many pipelined clients, every echo correct.
void expect_serves_concurrent_clients(
    unsigned threads, live::IoModel model,
    std::shared_ptr<const servercore::TlsServerContext> tls = {}) {
  live::ServerOptions so;
  so.threads = threads;
  so.io_model = model;
  so.tls = tls;
  live::LiveServer server(so);
  server.start();
  auto o = options(*parse_url(server.base_url()), 8, 8);
  const std::string body(700, 'e');
  o.requests = std::make_shared<const std::vector<loadbench::LoadRequest>>(
      std::vector<loadbench::LoadRequest>{
          {loadbench::format_load_request("POST", "/echo", "127.0.0.1", body), body,
           std::nullopt}});
  o.threads = 2;
  if (tls) o.trusted_ca_pem = servercore::make_credentials({}).ca_pem;
  const auto m = loadbench::run_load(o);
  EXPECT_EQ(m.error_count(), 0u) << live::to_string(model) << " x" << threads;
  EXPECT_GT(m.latencies_ms.size(), 100u);
  EXPECT_EQ(m.connections_opened, 8u);
  const auto stats = server.stats();
  EXPECT_EQ(stats.connections_accepted, 8u);
  EXPECT_GE(stats.requests_served, m.latencies_ms.size());
}

TEST(LoadGenerator, SharedIoModelServesConcurrentClients) {
  expect_serves_concurrent_clients(3, live::IoModel::kShared);
}

TEST(LoadGenerator, ShardedIoModelServesConcurrentClients) {
  expect_serves_concurrent_clients(3, live::IoModel::kSharded);
}

TEST(LoadGenerator, ShardedIoModelOverTls) {
  const auto credentials = servercore::make_credentials({});
  expect_serves_concurrent_clients(
      2, live::IoModel::kSharded,
      std::make_shared<const servercore::TlsServerContext>(
          servercore::TlsServerConfig{credentials.chain_pem, credentials.key_pem}));
}

TEST(ServerProcess, StartsServeAndStopsItCleanly) {
  loadbench::ServerProcess process(
      {TWINBENCH_BINARY, "serve", "--port", "0", "--threads", "2", "--io-model", "sharded"}, 20s);
  ASSERT_TRUE(process.url().starts_with("http://127.0.0.1:")) << process.url();
  loadbench::LoadOptions o = options(*parse_url(process.url()), 2, 2);
  o.duration = 200ms;
  EXPECT_EQ(loadbench::run_load(o).error_count(), 0u);
  // Stopped by SIGTERM, serve closes every connection and exits 128 + SIGTERM on its own (not
  // killed: stop() escalates to SIGKILL after two seconds).
  const int status = process.stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
}

TEST(ServerProcess, AServerThatNeverReportsIsAnError) {
  EXPECT_THROW(loadbench::ServerProcess({"/bin/true"}, 5s), std::runtime_error);
}

}  // namespace
}  // namespace tb
