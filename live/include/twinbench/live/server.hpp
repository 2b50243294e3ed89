#pragma once
// The benchmark server on real sockets: an Asio acceptor in front of
// tb::servercore::ServerConnection, one per accepted connection. It stands in for the benchmark's
// local Python server (HTTP/1.1 keep-alive, head in one write, body in 64 KiB writes, Nagle left
// on).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "twinbench/servercore/server_connection.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace tb::live {

// How the server's threads share the connections (docs/load.md):
// kShared: one io_context run by every thread; each connection's handlers are serialised by a
//   strand (none is needed with one thread).
// kSharded: one io_context per thread; the one acceptor hands accepted connections to them in
//   turn (round robin), and a connection stays on its context for its life.
enum class IoModel { kShared, kSharded };
const char* to_string(IoModel model);

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;          // 0 = ephemeral
  bool nodelay = false;            // Nagle left on by default, like the stand-in server
  std::string congestion_control;  // setsockopt(TCP_CONGESTION) on the listener; empty: default
  unsigned threads = 1;
  IoModel io_model = IoModel::kShared;
  // A connection that neither sends a byte nor takes one for this long is closed (a slowloris
  // head, a client that never reads its body, an idle keep-alive): longer than a client pool's
  // own idle timeout (Godot's C3Http Session: 60 s), so kept-alive connections end from the
  // client's side. 0: never.
  std::chrono::milliseconds idle_timeout{120'000};
  // A request head (or TLS handshake) begun must be complete within this long, however its bytes
  // trickle in: the idle timeout alone restarts on every byte, so a head sent a byte a second
  // (slowloris) would hold the connection for hours. Answered 408 and closed. Like Apache's
  // mod_reqtimeout (header=20). 0: never.
  std::chrono::milliseconds head_timeout{20'000};
  // Connections beyond this many open ones are closed as they are accepted. 0: no cap.
  std::size_t max_connections = 4096;
  tb::servercore::ServerConfig config;
  std::shared_ptr<const tb::servercore::TlsServerContext> tls;  // set: HTTPS
};

struct ServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t requests_served = 0;
  std::uint64_t open_connections = 0;
};

// Runs its io_contexts on `threads` threads: background threads (start()), or the caller's thread
// and threads - 1 more (run_foreground()).
class LiveServer {
 public:
  // Binds and listens immediately; throws std::system_error naming the address on failure.
  // Connections made before start() wait in the listen backlog.
  explicit LiveServer(ServerOptions options);
  ~LiveServer();  // stop() + join
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  // Starts the background threads; idempotent.
  void start();
  // Closes the acceptor and every connection, then joins the background threads; idempotent,
  // callable from any thread, including a handler or a signal.
  void stop();

  std::uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:<port>" (https with TLS)
  ServerStats stats() const;     // thread-safe

  // For `twinbench serve`: serves on the calling thread until stop() or SIGINT/SIGTERM.
  void run_foreground();
  // After run_foreground(): the signal that stopped it (SIGINT or SIGTERM), 0 if stop() did.
  int stop_signal() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tb::live
