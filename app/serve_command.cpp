// `twinbench serve`: the benchmark endpoints on a port, HTTP or HTTPS, until Ctrl-C.
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/report.hpp"

namespace tb::app {

namespace {

struct ServeArgs {
  live::ServerOptions server;
  bool tls = false;
  std::string key_type = "rsa2048";
  std::uint32_t intermediates = 0;
  std::string ca_out;  // where to write the root certificate; empty: print it on stdout
  std::string io_model = "shared";
  int ready_fd = -1;  // gets "<base URL>\n" once listening, then is closed
  double idle_timeout_s = 120;
  double head_timeout_s = 20;
};

// Raises the soft limit on open files to the hard one, as nginx's worker_rlimit_nofile would: the
// default soft limit (often 1024) is far below --max-connections. Says so when the cap cannot be
// reached even then.
void raise_open_file_limit(std::size_t max_connections) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &limit);
    ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  constexpr rlim_t kSpareDescriptors = 64;  // listener, epoll, signals, stdio, files
  if (max_connections == 0 || limit.rlim_cur == RLIM_INFINITY ||
      limit.rlim_cur >= max_connections + kSpareDescriptors)
    return;
  std::cerr << "twinbench serve: warning: only " << limit.rlim_cur
            << " open files allowed (ulimit -n), fewer than --max-connections "
            << max_connections << "; accepts beyond that fail and are retried\n";
}

// Generated test certificates for the server; the root CA goes to --tls-ca-out or stdout.
void add_test_certificates(ServeArgs& a) {
  servercore::CertProfile profile;
  for (auto k : {servercore::KeyType::kRsa2048, servercore::KeyType::kRsa4096,
                 servercore::KeyType::kEd25519, servercore::KeyType::kEcdsaP256})
    if (a.key_type == servercore::to_string(k)) profile.key_type = k;
  profile.intermediates = a.intermediates;
  profile.names = {a.server.bind_address, "localhost", "127.0.0.1"};
  const auto credentials = servercore::make_credentials(profile);
  a.server.tls = std::make_shared<const servercore::TlsServerContext>(
      servercore::TlsServerConfig{credentials.chain_pem, credentials.key_pem});
  if (a.ca_out.empty()) {
    std::cout << credentials.ca_pem << std::flush;
  } else {
    scenario::write_file_atomically(a.ca_out, credentials.ca_pem);
    std::cerr << "twinbench serve: wrote the root CA to " << a.ca_out << "\n";
  }
}

// Tells a parent process (twinbench load, a test) where the server listens, so it need not poll.
void announce_ready(int fd, const std::string& url) {
  const std::string line = url + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw InputError("--ready-fd " + std::to_string(fd) + ": cannot write to it");
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

// Returns the exit status: 0, or 128 + the signal that stopped the server (after it closed every
// connection, as a stopped run does).
int serve_command(ServeArgs a) {
  if (a.tls) add_test_certificates(a);
  a.server.io_model = a.io_model == "sharded" ? live::IoModel::kSharded : live::IoModel::kShared;
  a.server.idle_timeout = std::chrono::milliseconds(std::llround(a.idle_timeout_s * 1000));
  a.server.head_timeout = std::chrono::milliseconds(std::llround(a.head_timeout_s * 1000));
  raise_open_file_limit(a.server.max_connections);
  live::LiveServer server(a.server);
  std::cerr << "twinbench serve: listening on " << server.base_url() << " (Nagle "
            << (a.server.nodelay ? "off" : "on") << ", " << a.server.threads << " thread"
            << (a.server.threads == 1 ? "" : "s") << ", io-model " << a.io_model << ", "
            << (a.server.config.coalesce_head_and_body ? "coalesced" : "split")
            << " writes); Ctrl-C stops\n";
  if (a.ready_fd >= 0) announce_ready(a.ready_fd, server.base_url());
  server.run_foreground();
  if (const int signal = server.stop_signal()) {
    std::cerr << "twinbench serve: interrupted by SIG" << ::sigabbrev_np(signal)
              << ": every connection closed\n";
    return 128 + signal;
  }
  return 0;
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  a->server.port = 8927;
  auto* cmd = app.add_subcommand("serve", "Serve the benchmark endpoints (HTTP/1.1 keep-alive)");
  cmd->add_option("--bind", a->server.bind_address, "Address to bind");
  cmd->add_option("--port", a->server.port, "Port (0 = any free port)");
  cmd->add_flag("--nodelay", a->server.nodelay, "Disable Nagle (TCP_NODELAY) on accepted sockets");
  cmd->add_flag("--tls", a->tls, "HTTPS with generated test certificates (TLS 1.2 and 1.3)");
  cmd->add_option("--tls-key-type", a->key_type, "Key type of the certificates")
      ->check(CLI::IsMember({"rsa2048", "rsa4096", "ed25519", "ecdsa-p256"}))
      ->capture_default_str();
  cmd->add_option("--tls-intermediates", a->intermediates, "Intermediate CAs in the chain sent")
      ->check(CLI::Range(0u, 16u));
  cmd->add_option("--tls-ca-out", a->ca_out,
                  "Write the root CA here (default: print it on stdout)");
  cmd->add_option("--threads", a->server.threads, "Threads serving connections")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--io-model", a->io_model,
                  "shared: one io_context run by every thread (a strand per connection); "
                  "sharded: one io_context per thread, connections handed out in turn")
      ->check(CLI::IsMember({"shared", "sharded"}))
      ->capture_default_str();
  cmd->add_flag("--coalesce-writes", a->server.config.coalesce_head_and_body,
                "A response's head and a small body in one write (default: two, as the stand-in)");
  cmd->add_option("--max-head-bytes", a->server.config.max_header_bytes,
                  "Larger request heads are answered 431 and the connection closed")
      ->check(CLI::Range(std::size_t{256}, std::size_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--idle-timeout", a->idle_timeout_s,
                  "Seconds a connection may send and take nothing before it is closed (0: never)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--head-timeout", a->head_timeout_s,
                  "Seconds a request head (or TLS handshake) may take once begun; then 408 and "
                  "a close (0: never)")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("--max-connections", a->server.max_connections,
                  "Connections accepted beyond this many open ones are closed at once (0: no cap)")
      ->capture_default_str();
  cmd->add_option("--ready-fd", a->ready_fd,
                  "Write the base URL and a newline to this open file descriptor once listening")
      ->check(CLI::Range(0, 65535));
  auto status = std::make_shared<int>(0);
  return {cmd, [a, status] { *status = serve_command(*a); }, status};
}

}  // namespace tb::app
