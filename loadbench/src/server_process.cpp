#include "twinbench/loadbench/server_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace tb::loadbench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kStopTimeout = std::chrono::seconds(2);

// Reads one line from `fd` until `deadline`; empty if the writer closed or time ran out.
std::string read_line(int fd, Clock::time_point deadline) {
  std::string line;
  while (line.find('\n') == std::string::npos) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return {};
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return {};
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return {};
    line.append(buffer, static_cast<std::size_t>(n));
  }
  return line.substr(0, line.find('\n'));
}

// In the child, between fork and exec: async-signal-safe calls only (the parent has threads).
[[noreturn]] void exec_child(char* const* args, int ready_fd, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect
  ::fcntl(ready_fd, F_SETFD, 0);            // the one descriptor the server inherits
  ::execv(args[0], args);
  ::_exit(127);
}

}  // namespace

std::string own_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

ServerProcess::ServerProcess(std::vector<std::string> argv,
                             std::chrono::milliseconds ready_timeout) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a pipe");
  argv.push_back("--ready-fd");
  argv.push_back(std::to_string(pipe_fds[1]));
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw std::runtime_error("cannot fork the server process");
  }
  if (pid_ == 0) exec_child(args.data(), pipe_fds[1], parent);
  ::close(pipe_fds[1]);
  url_ = read_line(pipe_fds[0], Clock::now() + ready_timeout);
  ::close(pipe_fds[0]);
  if (url_.empty()) {
    const int status = stop();
    throw std::runtime_error("the server process (" + argv[0] + ") did not report where it " +
                             "listens (wait status " + std::to_string(status) + ")");
  }
}

ServerProcess::~ServerProcess() { stop(); }

int ServerProcess::stop() {
  if (pid_ <= 0) return status_;
  ::kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + kStopTimeout;
  while (true) {
    const pid_t done = ::waitpid(pid_, &status_, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) break;
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status_, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  return status_;
}

}  // namespace tb::loadbench
