#include "twinbench/emulated/path_side.hpp"

#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace tb::emulated {
namespace {

// Descriptors of every PathSide in this process: a child forked later closes them, so that it
// holds no other side's TUN or control socket open (they would outlive their owner otherwise).
std::mutex registry_mutex;
std::vector<int> registered_fds;

void register_fd(int fd) {
  std::lock_guard lock(registry_mutex);
  registered_fds.push_back(fd);
}
void unregister_fd(int fd) {
  std::lock_guard lock(registry_mutex);
  std::erase(registered_fds, fd);
}

std::string errno_text(const std::string& what) { return what + ": " + std::strerror(errno); }

void write_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::send(fd, p, size, MSG_NOSIGNAL);  // a dead peer is an error, not SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(errno_text("write"));
    p += n;
    size -= static_cast<std::size_t>(n);
  }
}

bool read_exact(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// The child's report: a status byte ('+' ready, '-' failed), a length and a text (the settings,
// one per line, tab-separated; or the failure). The TUN descriptor rides on the status byte.
void send_report(int control, char status, const std::string& text, int tun_fd) {
  msghdr msg{};
  iovec iov{&status, 1};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control_buffer[CMSG_SPACE(sizeof(int))] = {};
  if (tun_fd >= 0) {
    msg.msg_control = control_buffer;
    msg.msg_controllen = sizeof control_buffer;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &tun_fd, sizeof(int));
  }
  while (::sendmsg(control, &msg, MSG_NOSIGNAL) < 0) {
    if (errno != EINTR) throw std::runtime_error(errno_text("sendmsg"));
  }
  const auto length = static_cast<std::uint32_t>(text.size());
  write_all(control, &length, sizeof length);
  write_all(control, text.data(), text.size());
}

std::string encode(const std::vector<AppliedSetting>& settings) {
  std::string text;
  for (const auto& s : settings)
    text += fmt::format("{}\t{}\t{}\t{}\n", s.field, s.value, s.applied ? 1 : 0, s.how);
  return text;
}

std::vector<AppliedSetting> decode(const std::string& text) {
  std::vector<AppliedSetting> settings;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    AppliedSetting s;
    std::istringstream fields(line);
    std::string applied;
    std::getline(fields, s.field, '\t');
    std::getline(fields, s.value, '\t');
    std::getline(fields, applied, '\t');
    std::getline(fields, s.how);
    s.applied = applied == "1";
    settings.push_back(std::move(s));
  }
  return settings;
}

[[noreturn]] void run_child(const SideConfig& config, const SideProgram& program, int control,
                            pid_t parent) {
  int status = 1;
  try {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);  // the parent died before the death signal was set
    // Sleeps as exact as the kernel can make them (threads created later inherit it): the real
    // frame loop's and the workers' sleeps stand for the simulation's exact ones.
    prctl(PR_SET_TIMERSLACK, 1UL);
    std::vector<AppliedSetting> settings;
    int tun = -1;
    try {
      if (::unshare(CLONE_NEWNET) != 0)
        throw std::runtime_error(
            errno_text("cannot create a network namespace (unshare CLONE_NEWNET)"));
      run_program({"ip", "link", "set", "lo", "up"});
      // IPv4 only, as simulated: no router solicitations or MLD reports on the path.
      for (const char* scope : {"all", "default"}) {
        try {
          write_sysctl(std::string("net/ipv6/conf/") + scope + "/disable_ipv6", "1");
        } catch (const std::exception&) {  // a kernel without IPv6 sends none anyway
        }
      }
      tun = create_tun(kDeviceName, config.address, config.peer, config.mtu_bytes);
      settings = apply_kernel_tcp(config.tcp, kDeviceName, config.peer);
    } catch (const std::exception& e) {
      send_report(control, '-', config.name + " side: " + e.what(), -1);
      ::_exit(1);
    }
    bool told = false;
    auto ready = [&] {
      if (told) return;
      told = true;
      send_report(control, '+', encode(settings), tun);
      ::close(tun);  // the parent holds it now
      char go = 0;
      if (!read_exact(control, &go, 1)) ::_exit(1);  // the parent went away
    };
    status = program(ready, control);
    if (!told)
      send_report(control, '-', config.name + " side: its program ended before it was ready", -1);
  } catch (const std::exception& e) {
    std::cerr << "error: " << config.name << " side: " << e.what() << "\n";
    status = 1;
  } catch (...) {
    status = 1;
  }
  std::cout.flush();
  std::cerr.flush();
  ::_exit(status);
}

}  // namespace

int create_tun(const std::string& name, const std::string& address, const std::string& peer,
               std::uint32_t mtu) {
  const int fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(errno_text("cannot open /dev/net/tun"));
  ifreq request{};
  request.ifr_flags = IFF_TUN | IFF_NO_PI;
  std::strncpy(request.ifr_name, name.c_str(), IFNAMSIZ - 1);
  if (::ioctl(fd, TUNSETIFF, &request) != 0) {
    const std::string reason = errno_text("cannot create the TUN device " + name + " (TUNSETIFF)");
    ::close(fd);
    throw std::runtime_error(reason);
  }
  try {
    run_program({"ip", "address", "add", address, "peer", peer + "/32", "dev", name});
    run_program({"ip", "link", "set", "dev", name, "mtu", std::to_string(mtu), "up"});
  } catch (...) {
    ::close(fd);
    throw;
  }
  return fd;
}

PathSide::PathSide(const SideConfig& config, SideProgram program) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw std::runtime_error(errno_text("socketpair"));
  std::cout.flush();
  std::cerr.flush();
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(pair[0]);
    ::close(pair[1]);
    throw std::runtime_error(errno_text("fork"));
  }
  if (pid_ == 0) {
    ::close(pair[0]);
    {
      std::lock_guard lock(registry_mutex);
      for (int fd : registered_fds) ::close(fd);
    }
    run_child(config, program, pair[1], parent);
  }
  ::close(pair[1]);
  control_fd_ = pair[0];
  register_fd(control_fd_);

  char status = 0;
  msghdr msg{};
  iovec iov{&status, 1};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control_buffer[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control_buffer;
  msg.msg_controllen = sizeof control_buffer;
  ssize_t n;
  while ((n = ::recvmsg(control_fd_, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  std::uint32_t length = 0;
  std::string text;
  if (n == 1 && read_exact(control_fd_, &length, sizeof length)) {
    text.resize(length);
    if (!read_exact(control_fd_, text.data(), length)) n = 0;
  }
  if (n != 1) {
    wait();
    unregister_fd(control_fd_);
    ::close(control_fd_);
    throw std::runtime_error(config.name + " side: the child ended during set-up (status " +
                             std::to_string(status_) + ")");
  }
  if (status != '+') {
    wait();
    unregister_fd(control_fd_);
    ::close(control_fd_);
    throw std::runtime_error(text);
  }
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
      std::memcpy(&tun_fd_, CMSG_DATA(c), sizeof(int));
  }
  if (tun_fd_ < 0) {
    terminate();
    unregister_fd(control_fd_);
    ::close(control_fd_);
    control_fd_ = -1;
    throw std::runtime_error(config.name + " side: no TUN descriptor received");
  }
  register_fd(tun_fd_);
  settings_ = decode(text);
}

PathSide::~PathSide() {
  if (!reaped_) terminate();
  for (int fd : {tun_fd_, control_fd_}) {
    if (fd < 0) continue;
    unregister_fd(fd);
    ::close(fd);
  }
}

void PathSide::go() {
  const char go = 'g';
  write_all(control_fd_, &go, 1);
}

std::optional<std::string> PathSide::read_all(const std::function<bool()>& stop) {
  std::string out;
  char buffer[65536];
  for (;;) {
    if (stop) {
      // A signal may land on any of this process's threads, so a blocked read would not see it.
      pollfd p{control_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) == 0 || (p.revents == 0)) {
        if (stop()) return std::nullopt;
        continue;
      }
    }
    const ssize_t n = ::read(control_fd_, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<std::size_t>(n));
  }
  return out;
}

int PathSide::wait() {
  if (reaped_) return status_;
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  reaped_ = true;
  if (r != pid_) return status_ = -1;  // cannot tell how it ended: not a success
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1;
  return status_;
}

void PathSide::terminate() {
  if (reaped_) return;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = WIFEXITED(status)     ? WEXITSTATUS(status)
                : WIFSIGNALED(status) ? -WTERMSIG(status)
                                      : -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  wait();
}

}  // namespace tb::emulated
