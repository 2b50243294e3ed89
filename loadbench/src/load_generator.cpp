// Each generator thread runs its own io_context with its share of the connections (connection i
// on thread i % threads), so a connection's handlers never run concurrently and need no strand.
// The run ends by a timer on every context at the end of the measured window, and, whatever the
// server does, run_until() returns a second after it.
#include "twinbench/loadbench/load_generator.hpp"

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

namespace tb::loadbench {
namespace {

namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kReadBufferBytes = 64 * 1024;
// A failed connection is replaced after this pause, so a server that refuses or resets at once
// costs a bounded number of attempts per second.
constexpr auto kReconnectPause = std::chrono::milliseconds(10);
// How long past the measured window the generator waits for its connections to close.
constexpr auto kCloseGrace = std::chrono::seconds(1);

// What every connection of a run reads; fixed before the threads start.
struct RunPlan {
  const LoadOptions& options;
  tcp::endpoint endpoint;
  Clock::time_point start, measure_from, measure_until;

  Time now() const { return Clock::now() - start; }
  bool measured(Time at) const { return at >= measure_from - start && at < measure_until - start; }
};

// What one thread's connections measured; merged when the threads have ended.
struct ShardResult {
  std::vector<double> latencies_ms;
  std::uint64_t body_bytes = 0;
  std::uint64_t connections_opened = 0;
  std::map<std::string, std::uint64_t> errors;
};

// "closed" when the server ended the connection (with requests outstanding: the run still
// wanted them), else "io".
std::string error_kind(const error_code& ec) {
  const bool closed = ec == asio::error::eof || ec == ssl::error::stream_truncated ||
                      ec == asio::error::connection_reset || ec == asio::error::broken_pipe;
  return closed ? "closed" : "io";
}

// One socket of a connection's life, with its TLS stream and buffers: pending handlers hold it,
// so it outlives a close and a reconnect until they have run.
struct Link {
  explicit Link(asio::io_context& io) : socket(io) {}
  tcp::socket socket;
  std::optional<ssl::stream<tcp::socket&>> tls;
  std::string write_buffer;
  std::array<char, kReadBufferBytes> read_buffer{};
};

class LoadConnection : public std::enable_shared_from_this<LoadConnection> {
 public:
  // tls: the shard's client context (null: plain HTTP).
  LoadConnection(asio::io_context& io, const RunPlan& plan, ssl::context* tls, ShardResult& result,
                 std::size_t index)
      : io_(io), plan_(plan), tls_(tls), result_(result), index_(index), timer_(io) {}

  void open() {
    if (stopped_) return;
    const unsigned generation = ++generation_;
    link_ = std::make_shared<Link>(io_);
    exchange_.emplace(plan_.options.requests, plan_.options.window, index_);
    writing_ = false;
    timer_.expires_after(plan_.options.connect_timeout);
    timer_.async_wait([self = shared_from_this(), generation](const error_code& ec) {
      if (!ec && generation == self->generation_ && !self->established_)
        self->fail("connect", "timed out");
    });
    established_ = false;
    link_->socket.async_connect(
        plan_.endpoint, [self = shared_from_this(), link = link_, generation](error_code ec) {
          if (generation == self->generation_) self->on_connected(ec);
        });
  }

  void stop() {
    stopped_ = true;
    close();
  }

 private:
  void on_connected(const error_code& ec) {
    if (stopped_) return;
    if (ec) return fail("connect", ec.message());
    ++result_.connections_opened;
    error_code ignored;
    if (plan_.options.nodelay) link_->socket.set_option(tcp::no_delay(true), ignored);
    if (!tls_) return on_established();
    auto& tls = link_->tls.emplace(link_->socket, *tls_);
    const std::string& host = plan_.options.server.host;
    tls.set_verify_callback(ssl::host_name_verification(host));
    error_code not_ip;
    asio::ip::make_address(host, not_ip);
    if (not_ip) SSL_set_tlsext_host_name(tls.native_handle(), host.c_str());
    tls.async_handshake(ssl::stream_base::client, [self = shared_from_this(), link = link_,
                                                   generation = generation_](error_code hec) {
      if (generation != self->generation_ || self->stopped_) return;
      if (hec) return self->fail("tls", hec.message());
      self->on_established();
    });
  }

  void on_established() {
    established_ = true;
    writing_ = false;
    timer_.cancel();
    read();
    pump();
  }

  void read() {
    auto handler = [self = shared_from_this(), link = link_, generation = generation_](
                       error_code ec, std::size_t n) {
      if (generation == self->generation_) self->on_read(ec, n);
    };
    const auto buffer = asio::buffer(link_->read_buffer);
    if (link_->tls)
      link_->tls->async_read_some(buffer, std::move(handler));
    else
      link_->socket.async_read_some(buffer, std::move(handler));
  }

  void on_read(const error_code& ec, std::size_t bytes) {
    if (stopped_) return;
    if (ec) return fail(error_kind(ec), ec.message());
    done_.clear();
    exchange_->on_receive(std::span(link_->read_buffer.data(), bytes), plan_.now(), done_);
    record(done_);
    if (exchange_->ended()) {
      const bool closed = exchange_->error() == "closed";
      return fail(closed ? "closed" : "response", exchange_->error());
    }
    pump();
    read();
  }

  void record(const std::vector<PipelinedExchange::Completion>& completions) {
    for (const auto& c : completions) {
      if (!plan_.measured(c.answered)) continue;
      result_.latencies_ms.push_back(to_ms(c.answered - c.sent));
      result_.body_bytes += c.body_bytes;
    }
  }

  // Sends what the window allows, in one write; one write at a time.
  void pump() {
    if (writing_ || stopped_) return;
    link_->write_buffer = exchange_->take_requests(plan_.now());
    if (link_->write_buffer.empty()) return;
    writing_ = true;
    auto handler = [self = shared_from_this(), link = link_, generation = generation_](
                       error_code ec, std::size_t) {
      if (generation != self->generation_ || self->stopped_) return;
      self->writing_ = false;
      if (ec) return self->fail(error_kind(ec), ec.message());
      self->pump();
    };
    const auto buffer = asio::buffer(link_->write_buffer);
    if (link_->tls)
      asio::async_write(*link_->tls, buffer, std::move(handler));
    else
      asio::async_write(link_->socket, buffer, std::move(handler));
  }

  // Counts the failure and replaces the connection after a pause, while the run lasts.
  void fail(const std::string& kind, const std::string& /*detail*/) {
    if (stopped_) return;
    ++result_.errors[kind];
    close();
    ++generation_;
    timer_.expires_after(kReconnectPause);
    timer_.async_wait([self = shared_from_this(), generation = generation_](const error_code& ec) {
      if (!ec && generation == self->generation_) self->open();
    });
  }

  void close() {
    error_code ignored;
    timer_.cancel();
    if (!link_) return;
    link_->socket.shutdown(tcp::socket::shutdown_both, ignored);
    link_->socket.close(ignored);
  }

  asio::io_context& io_;
  const RunPlan& plan_;
  ssl::context* tls_;
  ShardResult& result_;
  std::size_t index_;
  std::shared_ptr<Link> link_;
  asio::steady_timer timer_;  // the connect timeout, then the pause before a reconnect
  std::optional<PipelinedExchange> exchange_;
  std::vector<PipelinedExchange::Completion> done_;
  unsigned generation_ = 0;  // handlers of an earlier socket see a newer generation and return
  bool established_ = false;
  bool writing_ = false;
  bool stopped_ = false;
};

tcp::endpoint resolve(const Url& server) {
  asio::io_context io;
  tcp::resolver resolver(io);
  error_code ec;
  const auto results = resolver.resolve(server.host, std::to_string(server.port), ec);
  if (ec || results.empty())
    throw std::runtime_error("cannot resolve " + server.host + ": " + ec.message());
  return results.begin()->endpoint();
}

std::unique_ptr<ssl::context> make_tls_context(const LoadOptions& options) {
  if (!options.server.tls()) return nullptr;
  auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
  error_code ec;
  if (options.trusted_ca_pem.empty())
    context->set_default_verify_paths(ec);
  else
    context->add_certificate_authority(asio::buffer(options.trusted_ca_pem), ec);
  if (ec) throw std::runtime_error("cannot use the trusted CA: " + ec.message());
  context->set_verify_mode(ssl::verify_peer);
  return context;
}

// One thread's share of the connections, run to the end of the window plus the close grace.
void run_shard(const RunPlan& plan, unsigned shard, ssl::context* tls, ShardResult& result) {
  asio::io_context io(1);
  std::vector<std::shared_ptr<LoadConnection>> connections;
  for (unsigned i = shard; i < plan.options.clients; i += plan.options.threads)
    connections.push_back(std::make_shared<LoadConnection>(io, plan, tls, result, i));
  asio::steady_timer start(io, plan.start);
  start.async_wait([&](const error_code&) {
    for (auto& c : connections) c->open();
  });
  asio::steady_timer end(io, plan.measure_until);
  end.async_wait([&](const error_code&) {
    for (auto& c : connections) c->stop();
  });
  io.run_until(plan.measure_until + kCloseGrace);
}

LoadMeasurement merge(std::vector<ShardResult>& shards, const RunPlan& plan) {
  LoadMeasurement m;
  m.measured = plan.measure_until - plan.measure_from;
  for (auto& s : shards) {
    m.latencies_ms.insert(m.latencies_ms.end(), s.latencies_ms.begin(), s.latencies_ms.end());
    m.body_bytes += s.body_bytes;
    m.connections_opened += s.connections_opened;
    for (const auto& [kind, count] : s.errors) m.errors[kind] += count;
  }
  std::sort(m.latencies_ms.begin(), m.latencies_ms.end());
  return m;
}

}  // namespace

std::uint64_t LoadMeasurement::error_count() const {
  return std::accumulate(errors.begin(), errors.end(), std::uint64_t{0},
                         [](std::uint64_t sum, const auto& e) { return sum + e.second; });
}

LoadMeasurement run_load(const LoadOptions& options) {
  if (!options.requests || options.requests->empty())
    throw std::invalid_argument("run_load: no requests");
  LoadOptions bounded = options;
  bounded.threads = std::clamp(options.threads, 1u, std::max(1u, options.clients));
  // A TLS context per thread, so the shards share no OpenSSL state: with one shared context,
  // ThreadSanitizer reports the certificate data libcrypto caches lazily during handshakes
  // (written under its lock, read after a check it cannot see in the uninstrumented library).
  std::vector<std::unique_ptr<ssl::context>> tls;
  for (unsigned t = 0; t < bounded.threads; ++t) tls.push_back(make_tls_context(bounded));
  // The threads start together a little ahead, so the warmup covers every connect.
  const auto start = Clock::now() + std::chrono::milliseconds(5);
  const auto measure_from = start + std::chrono::duration_cast<Clock::duration>(bounded.warmup);
  const RunPlan plan{bounded, resolve(bounded.server), start, measure_from,
                     measure_from + std::chrono::duration_cast<Clock::duration>(bounded.duration)};

  std::vector<ShardResult> shards(bounded.threads);
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < bounded.threads; ++t)
    threads.emplace_back(
        [&plan, &tls, &shards, t] { run_shard(plan, t, tls[t].get(), shards[t]); });
  for (auto& t : threads) t.join();
  return merge(shards, plan);
}

}  // namespace tb::loadbench
