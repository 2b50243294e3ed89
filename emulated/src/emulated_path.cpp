#include "twinbench/emulated/emulated_path.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tb::emulated {

EmulatedPath::EmulatedPath(const PathConfig& config, SideProgram server, SideProgram client) {
  server_ = std::make_unique<PathSide>(SideConfig{"server", kServerAddress, kClientAddress,
                                                  config.link.mtu_bytes, config.server_tcp},
                                       std::move(server));
  client_ = std::make_unique<PathSide>(SideConfig{"client", kClientAddress, kServerAddress,
                                                  config.link.mtu_bytes, config.client_tcp},
                                       std::move(client));
  // After the sides are forked: a fork copies only the forking thread, but the spinners would
  // compete with the sides' set-up.
  cores_awake_ = std::make_unique<CoresAwake>();
  emulator_ = std::make_unique<LinkEmulator>(
      client_->tun_fd(), server_->tun_fd(), link::uplink_of(config.link, config.seed),
      link::downlink_of(config.link, config.seed), config.spin_us, !config.capture_prefix.empty());
  capture_prefix_ = config.capture_prefix;
  started_ns_ = monotonic_ns();
  server_->go();
  client_->go();
}

EmulatedPath::~EmulatedPath() {
  if (emulator_) emulator_->stop();
}

std::optional<std::string> EmulatedPath::client_output(const std::function<bool()>& stop) {
  return client_->read_all(stop);
}
int EmulatedPath::client_status() { return client_->wait(); }
pid_t EmulatedPath::client_pid() const { return client_->pid(); }

PathReport EmulatedPath::finish() {
  client_->terminate();
  server_->terminate();
  emulator_->stop();
  cores_awake_.reset();
  PathReport report;
  report.client_settings = client_->settings();
  report.server_settings = server_->settings();
  report.uplink = emulator_->uplink_stats();
  report.downlink = emulator_->downlink_stats();
  report.lateness = summarize_lateness({&report.uplink, &report.downlink});
  if (!capture_prefix_.empty() && client_->wait() == 0) {  // a failed run leaves no captures
    auto joined = [](const std::vector<CapturedPacket>& a, const std::vector<CapturedPacket>& b) {
      std::vector<CapturedPacket> all = a;
      all.insert(all.end(), b.begin(), b.end());
      return all;
    };
    write_pcap(capture_prefix_ + "-client.pcap",
               joined(report.uplink.sent, report.downlink.received), started_ns_);
    write_pcap(capture_prefix_ + "-server.pcap",
               joined(report.downlink.sent, report.uplink.received), started_ns_);
  }
  return report;
}

namespace {

bool has_net_admin() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) != 0) continue;
    const unsigned long long caps = std::stoull(line.substr(7), nullptr, 16);
    return (caps >> 12) & 1;  // CAP_NET_ADMIN
  }
  return false;
}

// In a forked child: a namespace, a TUN in it, and each congestion control on a socket. Writes
// the index of the first step that failed and its errno text to `out`.
[[noreturn]] void probe(int out, const std::vector<std::string>& congestion_controls) {
  auto fail = [&](int step, const std::string& what) {
    const std::string text = std::to_string(step) + " " + what + ": " + std::strerror(errno);
    (void)!::write(out, text.data(), text.size());
    ::_exit(1);
  };
  if (::unshare(CLONE_NEWNET) != 0) fail(1, "unshare(CLONE_NEWNET)");
  const int tun = ::open("/dev/net/tun", O_RDWR | O_CLOEXEC);
  if (tun < 0) fail(2, "open /dev/net/tun");
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, kDeviceName, IFNAMSIZ - 1);
  if (::ioctl(tun, TUNSETIFF, &request) != 0) fail(2, "TUNSETIFF");
  for (const auto& cc : congestion_controls) {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0 || ::setsockopt(s, IPPROTO_TCP, TCP_CONGESTION, cc.data(),
                              static_cast<socklen_t>(cc.size())) != 0)
      fail(3, "setsockopt(TCP_CONGESTION, " + cc + ")");
    ::close(s);
  }
  ::_exit(0);
}

}  // namespace

std::optional<MissingNeed> check_needs(const std::vector<std::string>& congestion_controls) {
  if (!has_net_admin()) {
    return MissingNeed{"capability",
                       "the emulated path needs CAP_NET_ADMIN (and CAP_SYS_ADMIN for its network "
                       "namespaces, whose "
                       "sysctls it writes): run it as root, e.g. sudo twinbench ..."};
  }
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
    return MissingNeed{"namespace", std::string("pipe: ") + std::strerror(errno)};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    probe(pipe_fds[1], congestion_controls);
  }
  ::close(pipe_fds[1]);
  if (pid < 0) {
    ::close(pipe_fds[0]);
    return MissingNeed{"namespace", std::string("fork: ") + std::strerror(errno)};
  }
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) return std::nullopt;
  const char step = text.empty() ? '1' : text[0];
  const std::string detail = text.size() > 2 ? text.substr(2) : "the probe process failed";
  switch (step) {
    case '1':
      return MissingNeed{"namespace",
                         "cannot create a network namespace (" + detail +
                             "): the emulated path needs unshare(CLONE_NEWNET), which containers "
                             "may forbid; run on a host or a privileged container"};
    case '2':
      return MissingNeed{
          "tun", "cannot create a TUN device (" + detail +
                     "): the emulated path needs /dev/net/tun (modprobe tun; in a container, "
                     "pass the device through)"};
    default:
      return MissingNeed{"tcp_congestion",
                         "the kernel lacks a congestion control the scenario names (" + detail +
                             "): see /proc/sys/net/ipv4/tcp_available_congestion_control "
                             "(modprobe tcp_bbr)"};
  }
}

}  // namespace tb::emulated
