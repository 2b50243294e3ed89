#include "twinbench/emulated/shell.hpp"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <functional>
#include <thread>

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "twinbench/emulated/emulated_path.hpp"
#include "twinbench/emulated/emulated_run.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::emulated {
namespace {

namespace fs = std::filesystem;

// The client side's process while the command runs: the shell's own SIGTERM, SIGHUP and SIGINT
// go on to it (a terminal's Ctrl-C reaches it directly too), and the shell ends when it does.
std::atomic<pid_t> running_client{-1};
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

extern "C" void forward_signal(int signal) {
  const pid_t pid = running_client.load();
  if (pid > 0) ::kill(pid, signal);
}

class ForwardSignals {
 public:
  explicit ForwardSignals(pid_t client) {
    running_client = client;
    struct sigaction forward {};
    forward.sa_handler = forward_signal;
    sigemptyset(&forward.sa_mask);
    forward.sa_flags = SA_RESTART;
    for (std::size_t i = 0; i < std::size(kForwarded); ++i)
      ::sigaction(kForwarded[i], &forward, &previous_[i]);
  }
  ~ForwardSignals() {
    for (std::size_t i = 0; i < std::size(kForwarded); ++i)
      ::sigaction(kForwarded[i], &previous_[i], nullptr);
    running_client = -1;
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  struct sigaction previous_[std::size(kForwarded)] {};
};

// The user the command runs as (--user), looked up before the path is built.
struct RunAs {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string home;
};

std::optional<RunAs> look_up(const std::string& user) {
  if (user.empty()) return std::nullopt;
  errno = 0;
  const passwd* entry = ::getpwnam(user.c_str());
  if (entry == nullptr)
    throw InputError(fmt::format("--user: no user named \"{}\" on this machine", user));
  return RunAs{entry->pw_name, entry->pw_uid, entry->pw_gid, entry->pw_dir};
}

// In the client side's child, after the path is up: becomes the command. Never returns.
[[noreturn]] void become_command(const std::vector<std::string>& command,
                                 const std::optional<RunAs>& as,
                                 const std::vector<std::pair<std::string, std::string>>& env) {
  const pid_t parent = ::getppid();
  for (int s : kForwarded) ::signal(s, SIG_DFL);
  for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
  if (as) {
    if (::initgroups(as->name.c_str(), as->gid) != 0 || ::setgid(as->gid) != 0 ||
        ::setuid(as->uid) != 0) {
      std::cerr << "twinbench shell: cannot become user " << as->name << ": "
                << std::strerror(errno) << "\n";
      ::_exit(126);
    }
    // A change of credentials clears the death signal: set it again, so that the command dies
    // with the shell however the shell dies.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::setenv("HOME", as->home.c_str(), 1);
    ::setenv("USER", as->name.c_str(), 1);
    ::setenv("LOGNAME", as->name.c_str(), 1);
  }
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execvp(argv[0], argv.data());
  std::cerr << "twinbench shell: cannot run " << command.front() << ": " << std::strerror(errno)
            << "\n";
  ::_exit(errno == ENOENT ? 127 : 126);
}

bool accepts_connections(const std::string& address, std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return false;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  const bool ok = ::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(s);
  return ok;
}

// In the server side's child: the user's server command, started and waited for until it
// accepts connections on the port (it runs in the namespace, so the connect is local).
int run_server_command(const std::string& command, std::uint16_t port,
                       const std::function<void()>& ready) {
  const pid_t server = ::fork();
  if (server < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (server == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::setenv(kServerAddressVariable, kServerAddress, 1);
    ::setenv(kServerPortVariable, std::to_string(port).c_str(), 1);
    ::dup2(STDERR_FILENO, STDOUT_FILENO);  // the command's stdout stays the client command's
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int status = 0;
  while (!accepts_connections(kServerAddress, port)) {
    if (::waitpid(server, &status, WNOHANG) == server)
      throw std::runtime_error(fmt::format(
          "the server command ended (status {}) before it listened on {}:{}: {}",
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), kServerAddress, port,
          command));
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format(
          "the server command did not listen on {}:{} within 30 s (it is told the address and "
          "port in ${} and ${}): {}",
          kServerAddress, port, kServerAddressVariable, kServerPortVariable, command));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ready();
  while (::waitpid(server, &status, 0) < 0 && errno == EINTR) {
  }
  return 0;
}

// The root certificate, where the command can read it (also as another user).
fs::path write_ca(const std::string& pem, const std::string& wanted, fs::path& temporary_dir) {
  fs::path file = wanted;
  if (file.empty()) {
    std::string dir = (fs::temp_directory_path() / "twinbench-shell-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr)
      throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    temporary_dir = dir;
    ::chmod(dir.c_str(), 0755);
    file = temporary_dir / "ca.pem";
  }
  scenario::write_file_atomically(file, pem);
  ::chmod(file.c_str(), 0644);
  return file;
}

std::string summary(const twinbench::EmulatedPath& path, int status,
                    const scenario::ResolvedLink& link) {
  return fmt::format(
      "twinbench shell: exit {}; link {:g} ms RTT, {:g}/{:g} Mbit/s down/up; {} packets, {} "
      "queue drops, {} policer drops, {} losses; packet lateness p99 {:.0f} us (limit {:.0f} "
      "us): {}",
      status, link.client_to_server_delay_ms + link.server_to_client_delay_ms,
      link.downlink_mbps, link.uplink_mbps, path.packets(), path.queue_drops(),
      path.policer_drops(), path.losses(), path.lateness_p99_us(), path.lateness_limit_us(),
      path.valid() ? "valid" : "INVALID: " + path.invalid_reason());
}

}  // namespace

int run_shell(const twinbench::Scenario& scenario, const ShellOptions& o) {
  if (o.command.empty()) throw InputError("shell: no command to run (twinbench shell SCENARIO -- COMMAND)");
  const auto as = look_up(o.user);
  if (const auto missing = run_emulated_preflight(scenario)) throw PathUnavailable(*missing);

  const PathConfig config = path_config(scenario, o.seed);
  runner::RunOptions run_options;
  std::string ca_pem;
  const live::ServerOptions server_options = emulated_server(scenario, config, run_options, &ca_pem);
  const std::uint16_t port =
      o.server_command.empty() || o.server_port == 0 ? kEmulatedServerPort : o.server_port;
  const std::string scheme = ca_pem.empty() ? "http" : "https";
  std::vector<std::pair<std::string, std::string>> env = {
      {kServerUrlVariable, fmt::format("{}://{}:{}", scheme, kServerAddress, port)},
      {kServerAddressVariable, kServerAddress},
      {kServerPortVariable, std::to_string(port)}};
  fs::path temporary_dir;
  struct RemoveDir {
    fs::path& dir;
    ~RemoveDir() {
      std::error_code ignored;
      if (!dir.empty()) fs::remove_all(dir, ignored);
    }
  } remove_dir{temporary_dir};
  if (!ca_pem.empty())
    env.emplace_back(kCaFileVariable, write_ca(ca_pem, o.ca_out, temporary_dir).string());

  auto server = [&](const std::function<void()>& ready, int) {
    if (!o.server_command.empty()) return run_server_command(o.server_command, port, ready);
    live::LiveServer own(server_options);
    ready();
    own.run_foreground();  // until SIGTERM
    return 0;
  };
  auto client = [&](const std::function<void()>& ready, int out_fd) -> int {
    ready();
    ::close(out_fd);
    become_command(o.command, as, env);
  };
  EmulatedPath path(config, server, client);
  int status = 0;
  {
    const ForwardSignals forward(path.client_pid());
    status = path.client_status();
  }
  const PathReport report = path.finish();
  twinbench::RunInfo run;
  record_path(scenario, config, report, run);
  if (status < 0) status = 128 - status;  // ended by a signal
  if (!o.report.empty()) {
    std::string json;
    google::protobuf::util::JsonPrintOptions print;
    print.add_whitespace = true;
    print.preserve_proto_field_names = true;
    (void)google::protobuf::util::MessageToJsonString(run.emulated(), &json, print);
    scenario::write_file_atomically(o.report, json);
  }
  if (!o.quiet) std::cerr << summary(run.emulated(), status, config.link) << "\n";
  return status;
}

}  // namespace tb::emulated
