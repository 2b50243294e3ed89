// The benchmark server over Boost.Asio. A session's handlers never run concurrently: with one
// thread per io_context they run on that thread, with a shared io_context on the session's strand.
// The acceptor has a strand of its own. Only the session registry (mutex) and the stats (atomics)
// are shared between threads.
#include "twinbench/live/server.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>

#include "twinbench/live/socket_options.hpp"

namespace tb::live {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

constexpr std::size_t kReadBufferBytes = 64 * 1024;
// Each serving thread reads into its own buffer; a session's handlers never run on two threads at
// once, and the connection copies what it keeps.
thread_local std::array<char, kReadBufferBytes> thread_read_buffer;
// After the last response of a closing connection the send side is shut down and the input is
// read and dropped for up to this long: closing with unread input would send an RST, which can
// destroy the response before the client reads it.
constexpr auto kLingerTimeout = std::chrono::seconds(2);
// accept() failing (e.g. out of file descriptors) is retried after a pause instead of spinning.
constexpr auto kAcceptRetryDelay = std::chrono::milliseconds(50);

std::string endpoint_text(const std::string& address, std::uint16_t port) {
  return address + ":" + std::to_string(port);
}

[[noreturn]] void throw_listen_error(const error_code& ec, const std::string& step,
                                     const std::string& where) {
  throw std::system_error(static_cast<std::error_code>(ec),
                          "twinbench server: cannot " + step + " " + where);
}

}  // namespace

const char* to_string(IoModel model) { return model == IoModel::kShared ? "shared" : "sharded"; }

struct LiveServer::Impl {
  class Session;
  using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;

  ServerOptions options;
  // One for kShared, one per thread for kSharded.
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<WorkGuard> idle_guards;  // keep a sharded context without connections running
  asio::strand<asio::io_context::executor_type> accept_strand;
  tcp::acceptor acceptor;
  asio::steady_timer accept_retry;
  std::optional<asio::signal_set> signals;
  std::atomic<int> stop_signal{0};  // the signal that stopped run_foreground(), if one did
  std::uint16_t bound_port = 0;
  std::string url;
  std::size_t next_shard = 0;  // accept strand only

  // Owns every live session so stop() can close them all.
  std::mutex sessions_mutex;
  std::unordered_map<Session*, std::shared_ptr<Session>> sessions;

  std::atomic<std::uint64_t> connections_accepted{0};
  std::atomic<std::uint64_t> requests_served{0};
  std::atomic<std::uint64_t> open_connections{0};

  std::atomic<bool> stop_requested{false};
  std::mutex lifecycle_mutex;  // guards `threads` and `running`
  std::vector<std::thread> threads;
  bool running = false;  // being run, by background threads or run_foreground()

  explicit Impl(ServerOptions opts);
  void listen();
  asio::any_io_executor next_session_executor();
  void accept();
  void on_accept(const error_code& ec, tcp::socket socket);
  void run_worker(std::size_t index);
  void start_workers(std::size_t first);
  void join_workers();
  void request_stop();
  void close_everything();
  void forget(Session* session);
};

// One accepted connection: reads feed the ServerConnection, its writes go out one at a time,
// exactly as it slices them.
class LiveServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& server, tcp::socket socket)
      : server_(server),
        socket_(std::move(socket)),
        connection_(tb::servercore::make_connection(server.options.config, server.options.tls)),
        linger_timer_(socket_.get_executor()),
        idle_timer_(socket_.get_executor()),
        head_timer_(socket_.get_executor()) {
    error_code ignored;
    socket_.non_blocking(true, ignored);  // read_some after a readiness wait must not block
  }

  asio::any_io_executor executor() { return socket_.get_executor(); }

  void start() {
    arm_idle_timer();
    read();
    pump_writes();
  }

  void close_now() {
    if (closed_) return;
    closed_ = true;
    error_code ignored;
    linger_timer_.cancel();
    idle_timer_.cancel();
    head_timer_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    server_.forget(this);
  }

 private:
  // Restarted by every byte read or written: a connection that makes no progress for the idle
  // timeout is closed, whatever it is stuck in.
  void arm_idle_timer() {
    if (server_.options.idle_timeout.count() <= 0) return;
    idle_timer_.expires_after(server_.options.idle_timeout);
    idle_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (!ec) self->close_now();
    });
  }

  // Runs while the client owes the rest of a head it began; the idle timer cannot catch a head
  // that trickles in, since every byte restarts it.
  void update_head_timer() {
    if (closed_ || finishing_ || server_.options.head_timeout.count() <= 0) return;
    const bool owed = connection_->receiving_request_head();
    if (owed == head_timer_running_) return;
    head_timer_running_ = owed;
    if (!owed) {
      head_timer_.cancel();
      return;
    }
    head_timer_.expires_after(server_.options.head_timeout);
    head_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (ec || self->closed_ || !self->head_timer_running_) return;
      self->head_timer_running_ = false;
      self->connection_->on_head_timeout();
      self->pump_writes();
    });
  }

  // Waits for input and only then reads it into the thread's buffer, so an idle connection holds
  // no read buffer of its own (10,000 idle connections would otherwise pin 640 MiB).
  void read() {
    reading_ = true;
    socket_.async_wait(tcp::socket::wait_read, [self = shared_from_this()](const error_code& ec) {
      self->on_readable(ec);
    });
  }

  void on_readable(error_code ec) {
    std::size_t bytes = 0;
    if (!ec && !closed_) {
      bytes = socket_.read_some(asio::buffer(thread_read_buffer), ec);
      if (ec == asio::error::would_block || ec == asio::error::try_again) {
        read();  // a spurious wakeup: nothing to read after all
        return;
      }
    }
    on_read(ec, bytes);
  }

  void on_read(const error_code& ec, std::size_t bytes) {
    reading_ = false;
    if (closed_) return;
    if (finishing_) {
      // Lingering: drop input until the peer closes, so our close does not turn into an RST.
      if (ec)
        close_now();
      else
        read();
      return;
    }
    if (ec == asio::error::eof) {
      peer_closed_ = true;
      connection_->on_peer_closed();
      pump_writes();
      return;
    }
    if (ec) {
      close_now();
      return;
    }
    arm_idle_timer();
    connection_->on_receive(std::as_bytes(std::span(thread_read_buffer.data(), bytes)));
    update_head_timer();
    pump_writes();
    if (!closed_ && !reading_) read();
  }

  void pump_writes() {
    if (closed_ || writing_) return;
    const auto chunk = connection_->next_write();
    if (chunk.empty()) {
      if (connection_->should_close()) finish();
      return;
    }
    writing_ = true;
    // The span stays valid until write_done(), even if more input arrives meanwhile.
    asio::async_write(
        socket_, asio::buffer(chunk.data(), chunk.size()),
        [self = shared_from_this()](const error_code& ec, std::size_t) { self->on_written(ec); });
  }

  void on_written(const error_code& ec) {
    writing_ = false;
    if (closed_) return;
    if (ec) {
      close_now();
      return;
    }
    arm_idle_timer();
    connection_->write_done();
    update_head_timer();  // a drained queue lets held-back input be parsed
    // Counted after the write: a TLS connection counts a response once it is encrypted.
    const std::uint64_t served = connection_->requests_served();
    server_.requests_served += served - counted_;
    counted_ = served;
    pump_writes();
  }

  void finish() {
    if (finishing_) return;
    finishing_ = true;
    head_timer_running_ = false;
    head_timer_.cancel();
    if (peer_closed_) {
      close_now();
      return;
    }
    error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    linger_timer_.expires_after(kLingerTimeout);
    linger_timer_.async_wait([self = shared_from_this()](const error_code& ec) {
      if (!ec) self->close_now();
    });
    if (!reading_) read();
  }

  Impl& server_;
  tcp::socket socket_;
  std::unique_ptr<tb::servercore::Connection> connection_;
  std::uint64_t counted_ = 0;  // responses already added to the server's stats
  asio::steady_timer linger_timer_;
  asio::steady_timer idle_timer_;
  asio::steady_timer head_timer_;
  bool head_timer_running_ = false;
  bool reading_ = false;
  bool writing_ = false;
  bool peer_closed_ = false;
  bool finishing_ = false;  // all responses written; waiting for the peer before closing
  bool closed_ = false;
};

static std::vector<std::unique_ptr<asio::io_context>> make_contexts(const ServerOptions& options) {
  const unsigned threads = std::max(1u, options.threads);
  const bool sharded = options.io_model == IoModel::kSharded;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  for (unsigned i = 0; i < (sharded ? threads : 1u); ++i)
    contexts.push_back(std::make_unique<asio::io_context>(sharded ? 1 : static_cast<int>(threads)));
  return contexts;
}

LiveServer::Impl::Impl(ServerOptions opts)
    : options(std::move(opts)),
      contexts(make_contexts(options)),
      accept_strand(asio::make_strand(*contexts.front())),
      acceptor(accept_strand),
      accept_retry(accept_strand) {
  for (const auto& context : contexts) idle_guards.push_back(asio::make_work_guard(*context));
  listen();
  accept();
}

void LiveServer::Impl::listen() {
  const std::string where = endpoint_text(options.bind_address, options.port);
  error_code ec;
  const auto address = asio::ip::make_address(options.bind_address, ec);
  if (ec) throw_listen_error(ec, "parse bind address", where);
  const tcp::endpoint endpoint(address, options.port);

  acceptor.open(endpoint.protocol(), ec);
  if (ec) throw_listen_error(ec, "open a socket for", where);
  // Lets a restarted server rebind while old connections sit in TIME_WAIT.
  acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (ec) throw_listen_error(ec, "set SO_REUSEADDR on", where);
  if (!options.congestion_control.empty() &&
      !set_congestion_control(acceptor.native_handle(), options.congestion_control)) {
    throw_listen_error(error_code(errno, boost::system::system_category()),
                       "set TCP_CONGESTION " + options.congestion_control + " on", where);
  }
  acceptor.bind(endpoint, ec);
  if (ec) throw_listen_error(ec, "bind", where);
  acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw_listen_error(ec, "listen on", where);

  bound_port = acceptor.local_endpoint(ec).port();
  if (ec) throw_listen_error(ec, "read the bound port of", where);

  // A wildcard bind is still reached through loopback.
  std::string host =
      address.is_unspecified() ? (address.is_v6() ? "::1" : "127.0.0.1") : address.to_string();
  if (address.is_v6()) host = "[" + host + "]";
  url = (options.tls ? "https://" : "http://") + host + ":" + std::to_string(bound_port);
}

// The executor a new connection's handlers run on: its shard's context in turn, or, with one
// context run by several threads, a strand of its own.
asio::any_io_executor LiveServer::Impl::next_session_executor() {
  if (options.io_model == IoModel::kSharded) {
    const std::size_t shard = next_shard++ % contexts.size();
    return contexts[shard]->get_executor();
  }
  if (options.threads > 1) return asio::make_strand(*contexts.front());
  return contexts.front()->get_executor();
}

void LiveServer::Impl::accept() {
  acceptor.async_accept(next_session_executor(), [this](const error_code& ec, tcp::socket socket) {
    on_accept(ec, std::move(socket));
  });
}

void LiveServer::Impl::on_accept(const error_code& ec, tcp::socket socket) {
  if (stop_requested || !acceptor.is_open()) return;
  if (ec) {
    accept_retry.expires_after(kAcceptRetryDelay);
    accept_retry.async_wait([this](const error_code& wait_ec) {
      if (!wait_ec && !stop_requested) accept();
    });
    return;
  }
  ++connections_accepted;
  if (options.max_connections > 0 && open_connections >= options.max_connections) {
    error_code ignored;  // over the cap: closed at once, the others keep being served
    socket.close(ignored);
    accept();
    return;
  }
  if (options.nodelay) {
    error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
  }
  auto session = std::make_shared<Session>(*this, std::move(socket));
  {
    std::lock_guard lock(sessions_mutex);
    sessions.emplace(session.get(), session);
  }
  ++open_connections;
  asio::post(session->executor(), [session] { session->start(); });
  accept();
}

void LiveServer::Impl::request_stop() {
  if (stop_requested.exchange(true)) return;
  asio::post(accept_strand, [this] { close_everything(); });
}

void LiveServer::Impl::close_everything() {
  error_code ignored;
  acceptor.close(ignored);
  accept_retry.cancel();
  if (signals) signals->cancel(ignored);
  for (auto& guard : idle_guards) guard.reset();
  // close_now() erases from `sessions` on the session's own executor, so post to a copy.
  std::unordered_map<Session*, std::shared_ptr<Session>> open_sessions;
  {
    std::lock_guard lock(sessions_mutex);
    open_sessions = sessions;
  }
  for (const auto& [raw, session] : open_sessions)
    asio::post(session->executor(), [session] { session->close_now(); });
  // With every socket, timer and signal wait cancelled, run() returns once the handlers drain.
}

void LiveServer::Impl::forget(Session* session) {
  std::lock_guard lock(sessions_mutex);
  if (sessions.erase(session) != 0) --open_connections;
}

void LiveServer::Impl::run_worker(std::size_t index) { contexts[index % contexts.size()]->run(); }

// Threads for workers first..threads-1; the caller holds lifecycle_mutex.
void LiveServer::Impl::start_workers(std::size_t first) {
  for (std::size_t i = first; i < std::max(1u, options.threads); ++i)
    threads.emplace_back([this, i] { run_worker(i); });
}

void LiveServer::Impl::join_workers() {
  std::lock_guard lock(lifecycle_mutex);
  for (auto& thread : threads)
    if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) thread.join();
}

LiveServer::LiveServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

LiveServer::~LiveServer() {
  stop();
  std::lock_guard lock(impl_->lifecycle_mutex);
  // Only reachable if the server is destroyed from one of its own threads: joining would deadlock.
  for (auto& thread : impl_->threads)
    if (thread.joinable()) thread.detach();
}

void LiveServer::start() {
  std::lock_guard lock(impl_->lifecycle_mutex);
  if (impl_->running || impl_->stop_requested) return;
  impl_->running = true;
  impl_->start_workers(0);
}

void LiveServer::stop() {
  impl_->request_stop();
  impl_->join_workers();
}

std::uint16_t LiveServer::port() const { return impl_->bound_port; }

std::string LiveServer::base_url() const { return impl_->url; }

ServerStats LiveServer::stats() const {
  ServerStats stats;
  stats.connections_accepted = impl_->connections_accepted.load();
  stats.requests_served = impl_->requests_served.load();
  stats.open_connections = impl_->open_connections.load();
  return stats;
}

int LiveServer::stop_signal() const { return impl_->stop_signal; }

void LiveServer::run_foreground() {
  {
    std::lock_guard lock(impl_->lifecycle_mutex);
    if (impl_->running) throw std::logic_error("twinbench server: already running");
    if (impl_->stop_requested) return;
    impl_->running = true;
    impl_->signals.emplace(impl_->accept_strand, SIGINT, SIGTERM);
    impl_->signals->async_wait([impl = impl_.get()](const error_code& ec, int signal) {
      if (ec) return;
      impl->stop_signal = signal;
      impl->request_stop();
    });
    impl_->start_workers(1);
  }
  impl_->run_worker(0);
  impl_->join_workers();
}

}  // namespace tb::live
