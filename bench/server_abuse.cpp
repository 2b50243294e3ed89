// How `twinbench serve` meets abusive clients, measured: each case runs against a fresh server
// child (HTTP or HTTPS) on 127.0.0.1 while a witness client pings it every 250 ms on new
// connections, and reports what the server did to the abuser (status, close) and after how long,
// how the witness fared, and the server's open sockets and RSS. Prints Markdown rows on stdout;
// scripts/abuse.sh writes them to results/reliability/abuse.md. Bounded in count and time.
//
// Usage: server_abuse TWINBENCH [--tls] [--idle-timeout S] [--head-timeout S] [--idle N]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <openssl/ssl.h>

#include "twinbench/loadbench/server_process.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

struct Settings {
  std::string twinbench;
  bool tls = false;
  // Shorter than serve's defaults (120 and 20 s) to keep the run short; the idle timeout longer
  // than the head timeout, as in the defaults, so that a trickled head meets the head timeout.
  int idle_timeout_s = 8;
  int head_timeout_s = 4;
  int idle_connections = 10000;
};

// A client connection, plain or TLS (OpenSSL over a blocking socket; certificates are not
// checked: the peer is our own child). Every call is bounded by a timeout.
class Client {
 public:
  Client(std::uint16_t port, SSL_CTX* tls, bool handshake = true) : tls_(tls) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket: out of descriptors?");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    set_timeout(5s);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
      throw std::runtime_error("connect failed");
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // trickles go out as sent
    if (tls_ && handshake) {
      ssl_ = SSL_new(tls_);
      SSL_set_fd(ssl_, fd_);
      if (SSL_connect(ssl_) != 1) throw std::runtime_error("TLS handshake failed");
    }
  }
  ~Client() {
    if (ssl_) SSL_free(ssl_);
    if (fd_ >= 0) ::close(fd_);
  }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  int fd() const { return fd_; }

  void set_timeout(std::chrono::milliseconds timeout) {
    timeval tv{static_cast<time_t>(timeout.count() / 1000),
               static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  }

  bool send(std::string_view bytes) {
    while (!bytes.empty()) {
      const long n = ssl_ ? SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size()))
                          : ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }

  // > 0 bytes, 0 the peer closed, -1 timed out, -2 reset or another error.
  long receive(char* buffer, std::size_t size) {
    if (ssl_) {
      errno = 0;
      const int n = SSL_read(ssl_, buffer, static_cast<int>(size));
      if (n > 0) return n;
      const int e = SSL_get_error(ssl_, n);
      if (e == SSL_ERROR_ZERO_RETURN) return 0;
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return -1;  // the timeout
      if (e == SSL_ERROR_SYSCALL && errno == 0) return 0;  // closed without close_notify
      if (errno == EAGAIN || errno == EWOULDBLOCK) return -1;
      return -2;
    }
    const long n = ::recv(fd_, buffer, size, 0);
    if (n >= 0) return n;
    return errno == EAGAIN || errno == EWOULDBLOCK ? -1 : -2;
  }

 private:
  int fd_ = -1;
  SSL_CTX* tls_;
  SSL* ssl_ = nullptr;
};

// What the server did to a connection: its status line if it answered, and how it ended.
struct Outcome {
  std::string status;  // "408 Request Timeout", or empty
  std::string ending;  // "closed", "reset", "still open"
  double after_s = 0;  // from the case's start to the ending
  std::string text() const {
    return status.empty() ? ending : status + ", then " + ending;
  }
};

// Reads until the server closes (or `limit` passes), keeping the status line of a response.
Outcome await_ending(Client& client, Clock::time_point start, std::chrono::seconds limit) {
  Outcome outcome;
  std::string head;
  char buffer[16384];
  client.set_timeout(250ms);
  while (Clock::now() - start < limit) {
    const long n = client.receive(buffer, sizeof buffer);
    if (n == -1) continue;
    if (n > 0) {
      if (head.size() < 256) head.append(buffer, static_cast<std::size_t>(std::min(n, 256L)));
      continue;
    }
    outcome.ending = n == 0 ? "closed" : "reset";
    break;
  }
  if (outcome.ending.empty()) outcome.ending = "still open";
  outcome.after_s = seconds_since(start);
  if (head.starts_with("HTTP/1.1 ")) outcome.status = head.substr(9, head.find('\r') - 9);
  return outcome;
}

// The server's open sockets (listener included) and resident memory, from /proc.
int open_sockets(pid_t pid) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(entry.path(), link_ec).string().starts_with("socket:"))
      ++count;
  }
  return count;
}

// The inode of the server's end of the connection from client_port to server_port (0: none).
unsigned long server_side_inode(std::uint16_t server_port, std::uint16_t client_port) {
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // header
  while (std::getline(table, line)) {
    char local[64], remote[64];
    unsigned state = 0;
    unsigned long inode = 0;
    if (std::sscanf(line.c_str(), " %*d: %63s %63s %x %*s %*s %*s %*s %*s %lu", local, remote,
                    &state, &inode) != 4)
      continue;
    const auto port_of = [](const char* address) {
      const char* colon = std::strchr(address, ':');
      return colon ? static_cast<std::uint16_t>(std::strtoul(colon + 1, nullptr, 16)) : 0;
    };
    if (port_of(local) == server_port && port_of(remote) == client_port && inode != 0)
      return inode;
  }
  return 0;
}

bool holds_socket(pid_t pid, unsigned long inode) {
  const std::string wanted = fmt::format("socket:[{}]", inode);
  std::error_code ec;
  for (const auto& entry :
       std::filesystem::directory_iterator(fmt::format("/proc/{}/fd", pid), ec)) {
    std::error_code link_ec;
    if (std::filesystem::read_symlink(entry.path(), link_ec).string() == wanted) return true;
  }
  return false;
}

// Pings the server on a new connection every 250 ms while a case runs.
class Witness {
 public:
  Witness(std::uint16_t port, SSL_CTX* tls) : thread_([this, port, tls] { run(port, tls); }) {}
  ~Witness() { finish(); }
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  std::string text() const {
    return fmt::format("{}/{} answered, slowest {:.0f} ms", answered_, tried_, slowest_ms_);
  }

 private:
  void run(std::uint16_t port, SSL_CTX* tls) {
    while (!stop_ && tried_ < 2400) {
      ++tried_;
      const auto start = Clock::now();
      try {
        Client client(port, tls);
        client.set_timeout(3s);
        client.send("GET /api/benchmark/ping/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        std::string reply;
        char buffer[4096];
        for (long n; (n = client.receive(buffer, sizeof buffer)) > 0;)
          reply.append(buffer, static_cast<std::size_t>(n));
        if (reply.starts_with("HTTP/1.1 200")) {
          ++answered_;
          slowest_ms_ = std::max(slowest_ms_, seconds_since(start) * 1000);
        }
      } catch (const std::exception&) {
        // Counted as not answered.
      }
      std::this_thread::sleep_for(250ms);
    }
  }

  std::atomic<bool> stop_{false};
  int tried_ = 0;
  int answered_ = 0;
  double slowest_ms_ = 0;
  std::thread thread_;
};

struct Row {
  std::string name;
  std::string outcome;
  std::string witness;
  long peak_rss_mib = 0;
};

long peak_rss_mib(pid_t pid) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string key;
  long kib = 0;
  while (status >> key) {
    if (key == "VmHWM:") {
      status >> kib;
      break;
    }
  }
  return kib / 1024;
}

std::string request_head(const std::string& target, const std::string& extra = {}) {
  return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra + "\r\n";
}

class Bench {
 public:
  explicit Bench(Settings settings) : s_(std::move(settings)) {
    if (s_.tls) {
      tls_ = SSL_CTX_new(TLS_client_method());
      SSL_CTX_set_verify(tls_, SSL_VERIFY_NONE, nullptr);
    }
    dir_ = std::filesystem::temp_directory_path() / fmt::format("server-abuse-{}", ::getpid());
    std::filesystem::create_directories(dir_);
  }
  ~Bench() {
    if (tls_) SSL_CTX_free(tls_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Runs `abuse` against a fresh server started with `extra` options, with the witness pinging.
  Row run(const std::string& name, std::vector<std::string> extra,
          const std::function<std::string(std::uint16_t port, pid_t pid)>& abuse) {
    std::cerr << "server_abuse: " << (s_.tls ? "https" : "http") << ": " << name << "\n";
    std::vector<std::string> argv = {s_.twinbench,
                                     "serve",
                                     "--port",
                                     "0",
                                     "--idle-timeout",
                                     std::to_string(s_.idle_timeout_s),
                                     "--head-timeout",
                                     std::to_string(s_.head_timeout_s)};
    if (s_.tls) {
      argv.insert(argv.end(), {"--tls", "--tls-ca-out", (dir_ / "ca.pem").string()});
    }
    argv.insert(argv.end(), extra.begin(), extra.end());
    tb::loadbench::ServerProcess server(argv, 10s);
    const std::uint16_t port = static_cast<std::uint16_t>(
        std::stoi(server.url().substr(server.url().rfind(':') + 1)));
    Row row;
    row.name = name;
    Witness witness(port, tls_);
    row.outcome = abuse(port, server.pid());
    witness.finish();
    row.witness = witness.text();
    row.peak_rss_mib = peak_rss_mib(server.pid());
    return row;
  }

  // The abuser's bytes, then what the server did with its connection.
  Outcome one_connection(std::uint16_t port, const std::string& bytes, bool handshake = true) {
    const auto start = Clock::now();
    Client client(port, tls_, handshake);
    client.send(bytes);
    return await_ending(client, start, std::chrono::seconds(3 * s_.idle_timeout_s + 10));
  }

  // Sends `bytes` one a second (each in its own segment) until the server answers or closes.
  Outcome trickle(std::uint16_t port, const std::string& bytes, bool handshake) {
    const auto start = Clock::now();
    Client client(port, tls_, handshake);
    const int fd = client.fd();
    std::size_t sent = 0;
    const auto limit = std::chrono::seconds(3 * s_.head_timeout_s + 10);
    while (sent < bytes.size() && Clock::now() - start < limit) {
      // Raw bytes on TLS too when no handshake: the handshake itself is what trickles.
      if (handshake ? !client.send(bytes.substr(sent, 1))
                    : ::send(fd, bytes.data() + sent, 1, MSG_NOSIGNAL) != 1)
        break;
      ++sent;
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 1000) > 0) break;  // the server said something or closed
    }
    Outcome outcome = await_ending(client, start, limit);
    outcome.ending += fmt::format(" ({} of {} bytes sent)", sent, bytes.size());
    return outcome;
  }

  // `count` connections that send nothing: how many the server closed at once, how many sockets
  // it held, and how long until it closed the rest.
  std::string idle_connections(std::uint16_t port, pid_t pid, int count) {
    const int sockets_before = open_sockets(pid);
    const auto start = Clock::now();
    std::vector<std::unique_ptr<Client>> clients;
    clients.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) clients.push_back(std::make_unique<Client>(port, tls_, false));
    const double opened_s = seconds_since(start);
    std::this_thread::sleep_for(1s);
    const int closed_at_once = closed_count(clients);
    const int held = open_sockets(pid) - sockets_before;
    const auto limit = std::chrono::seconds(3 * s_.idle_timeout_s + 10);
    int closed = closed_at_once;
    while (closed < count && Clock::now() - start < limit) {
      std::this_thread::sleep_for(100ms);
      closed = closed_count(clients);
    }
    return fmt::format(
        "{} connected in {:.1f} s; {} closed at once, {} held by the server; {} closed after "
        "{:.1f} s",
        count, opened_s, closed_at_once, held, closed == count ? "all" : "NOT all",
        seconds_since(start));
  }

  // Asks for 1 GiB and reads nothing: the server's writes stall. Watches the server's descriptor
  // for this connection to see when it drops it (the kernel may keep an orphaned socket trying to
  // send for a while after; that is no longer the server's).
  std::string never_reads(std::uint16_t port, pid_t pid) {
    const auto start = Clock::now();
    const auto limit = std::chrono::seconds(3 * s_.idle_timeout_s + 10);
    Client client(port, tls_);
    const int small = 4096;
    ::setsockopt(client.fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    client.send(request_head("/api/benchmark/download/1073741824/"));
    sockaddr_in local{};
    socklen_t length = sizeof local;
    ::getsockname(client.fd(), reinterpret_cast<sockaddr*>(&local), &length);
    unsigned long inode = 0;  // 0 until the server accepts (no socket file before)
    while ((inode = server_side_inode(port, ntohs(local.sin_port))) == 0 &&
           Clock::now() - start < 2s)
      std::this_thread::sleep_for(10ms);
    if (inode == 0) return "the server's socket was not found in /proc/net/tcp";
    while (holds_socket(pid, inode) && Clock::now() - start < limit)
      std::this_thread::sleep_for(50ms);
    return fmt::format("{} by the server after {:.2f} s",
                       holds_socket(pid, inode) ? "NOT closed" : "closed", seconds_since(start));
  }

  bool tls() const { return s_.tls; }
  const Settings& settings() const { return s_; }

 private:
  static int closed_count(const std::vector<std::unique_ptr<Client>>& clients) {
    std::vector<pollfd> fds;
    fds.reserve(clients.size());
    for (const auto& c : clients) fds.push_back({c->fd(), POLLIN | POLLRDHUP, 0});
    ::poll(fds.data(), fds.size(), 0);
    return static_cast<int>(std::count_if(fds.begin(), fds.end(), [](const pollfd& p) {
      return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
    }));
  }

  Settings s_;
  SSL_CTX* tls_ = nullptr;
  std::filesystem::path dir_;
};

void raise_open_file_limit(int needed) {
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < static_cast<rlim_t>(needed))
    throw std::runtime_error(fmt::format("needs {} open files; ulimit -Hn allows {}", needed,
                                         limit.rlim_cur));
}

std::vector<Row> run_all(Bench& bench) {
  const Settings& s = bench.settings();
  std::vector<Row> rows;
  // A case on one connection: what the server did to it, and when.
  const auto single = [&](const std::string& name, std::function<Outcome(std::uint16_t)> abuse) {
    rows.push_back(bench.run(name, {}, [&](std::uint16_t port, pid_t) {
      const Outcome outcome = abuse(port);
      return fmt::format("{} after {:.2f} s", outcome.text(), outcome.after_s);
    }));
  };
  const auto sent = [&](const std::string& name, const std::string& bytes) {
    single(name, [&](std::uint16_t port) { return bench.one_connection(port, bytes); });
  };

  single("slowloris: a request head sent a byte a second", [&](std::uint16_t port) {
    return bench.trickle(port, request_head("/api/benchmark/ping/"), true);
  });
  if (bench.tls()) {
    // A ClientHello record's header and start, trickled: the handshake never completes.
    std::string hello("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11);
    hello += std::string(64, '\x01');
    single("slow handshake: a ClientHello sent a byte a second",
           [&](std::uint16_t port) { return bench.trickle(port, hello, false); });
    single("not TLS: a plain HTTP request to the HTTPS port", [&](std::uint16_t port) {
      return bench.one_connection(port, request_head("/api/benchmark/ping/"), false);
    });
  }
  sent("oversized head: one 20 KiB header (limit 16 KiB)",
       request_head("/api/benchmark/ping/", "X-Big: " + std::string(20 * 1024, 'a') + "\r\n"));
  sent("oversized body: POST /echo declaring 32 MiB (limit 16 MiB)",
       "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 33554432\r\n\r\n");
  sent("malformed request line: `HELLO THERE`", "HELLO THERE\r\n\r\n");
  sent("malformed request line: a NUL in the method",
       std::string("GE\0T / HTTP/1.1\r\nHost: x\r\n\r\n", 28));
  sent("malformed head: a header line without a colon",
       "GET /api/benchmark/ping/ HTTP/1.1\r\nHost x\r\n\r\n");

  rows.push_back(bench.run(
      "never reads: GET of 1 GiB, receive buffer 4 KiB, nothing read", {},
      [&](std::uint16_t port, pid_t pid) { return bench.never_reads(port, pid); }));
  const int n = s.idle_connections;
  rows.push_back(bench.run(
      fmt::format("{} idle connections (no bytes), --max-connections {}", n, n + 1024),
      {"--max-connections", std::to_string(n + 1024)},
      [&](std::uint16_t port, pid_t pid) { return bench.idle_connections(port, pid, n); }));
  rows.push_back(bench.run(
      fmt::format("{} idle connections at the default cap (4096 open connections)", n), {},
      [&](std::uint16_t port, pid_t pid) { return bench.idle_connections(port, pid, n); }));
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) {
      std::cerr << "usage: server_abuse TWINBENCH [--tls] [--idle-timeout S] [--head-timeout S]"
                   " [--idle N]\n";
      return 2;
    }
    Settings settings;
    settings.twinbench = argv[1];
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      const auto value = [&] {
        if (i + 1 >= argc) throw std::runtime_error(arg + " needs a value");
        return std::stoi(argv[++i]);
      };
      if (arg == "--tls")
        settings.tls = true;
      else if (arg == "--idle-timeout")
        settings.idle_timeout_s = value();
      else if (arg == "--head-timeout")
        settings.head_timeout_s = value();
      else if (arg == "--idle")
        settings.idle_connections = value();
      else
        throw std::runtime_error("unknown argument " + arg);
    }
    raise_open_file_limit(settings.idle_connections + 256);
    // A write to a connection the server closed (the witness over the cap, TLS alerts) must be
    // an error to report, not the end of the run.
    std::signal(SIGPIPE, SIG_IGN);
    Bench bench(settings);
    const std::string scheme = settings.tls ? "https" : "http";
    for (const Row& row : run_all(bench))
      std::cout << fmt::format("| {} | {} | {} | {} | {} MiB |\n", scheme, row.name, row.outcome,
                               row.witness, row.peak_rss_mib);
  } catch (const std::exception& error) {
    std::cerr << "server_abuse: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
