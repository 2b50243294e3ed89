#include "twinbench/emulated/kernel_tcp.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

extern char** environ;

namespace tb::emulated {

std::string kernel_congestion_control(scenario::CongestionControl cc) {
  switch (cc) {
    case scenario::CongestionControl::kBbr:
      return "bbr";
    case scenario::CongestionControl::kNewReno:
      return "reno";
    case scenario::CongestionControl::kCubic:
      break;
  }
  return "cubic";
}

void run_program(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Quiet: a failure is reported by the caller, with what it means for the run.
  posix_spawn_file_actions_t quiet;
  posix_spawn_file_actions_init(&quiet);
  posix_spawn_file_actions_addopen(&quiet, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&quiet, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int e = posix_spawnp(&pid, args[0], &quiet, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&quiet);
  if (e != 0)
    throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(e)));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string line;
    for (const auto& a : argv) line += (line.empty() ? "" : " ") + a;
    throw std::runtime_error(fmt::format("`{}` failed (status {})", line, status));
  }
}

void write_sysctl(const std::string& name, const std::string& value) {
  const std::string path = "/proc/sys/" + name;
  {
    std::ofstream out(path);
    out << value << "\n";
    out.flush();
    if (!out) throw std::runtime_error("cannot write sysctl " + name + " = " + value);
  }
  std::ifstream in(path);
  std::string read_back;
  std::getline(in, read_back);
  // Multi-value sysctls read back tab-separated.
  std::istringstream want(value), got(read_back);
  std::string w, g;
  while (want >> w) {
    if (!(got >> g) || g != w)
      throw std::runtime_error("sysctl " + name + " reads back '" + read_back + "', not '" + value +
                               "'");
  }
}

std::vector<AppliedSetting> apply_kernel_tcp(const scenario::ResolvedTcp& tcp,
                                             const std::string& device, const std::string& peer) {
  std::vector<AppliedSetting> report;
  auto sysctl = [&](const std::string& field, const std::string& value, const std::string& name,
                    const std::string& kernel_value) {
    write_sysctl(name, kernel_value);
    report.push_back({field, value, true, name + " = " + kernel_value});
  };
  // A namespace other than the host's may only default to the host's allowed algorithms, so the
  // route to the peer names it (congctl, below: any program's sockets, as behind `twinbench
  // shell`), and twinbench's own client and server also set it on their sockets.
  report.push_back({"congestion_control", kernel_congestion_control(tcp.congestion_control), true,
                    "route metric congctl, and setsockopt(TCP_CONGESTION) on twinbench's own "
                    "client's and server's sockets"});
  sysctl("slow_start_after_idle", tcp.slow_start_after_idle ? "true" : "false",
         "net/ipv4/tcp_slow_start_after_idle", tcp.slow_start_after_idle ? "1" : "0");
  sysctl("sack", tcp.sack ? "true" : "false", "net/ipv4/tcp_sack", tcp.sack ? "1" : "0");
  sysctl("timestamps", tcp.timestamps ? "true" : "false", "net/ipv4/tcp_timestamps",
         tcp.timestamps ? "1" : "0");
  // Buffers: the simulation's are the autotuning maxima; the kernel keeps its own minimum and
  // initial size and autotunes up to them.
  sysctl("send_buffer_bytes", std::to_string(tcp.send_buffer_bytes), "net/ipv4/tcp_wmem",
         fmt::format("4096 {} {}", std::min<std::uint64_t>(16384, tcp.send_buffer_bytes),
                     tcp.send_buffer_bytes));
  sysctl("receive_buffer_bytes", std::to_string(tcp.receive_buffer_bytes), "net/ipv4/tcp_rmem",
         fmt::format("4096 {} {}", std::min<std::uint64_t>(131072, tcp.receive_buffer_bytes),
                     tcp.receive_buffer_bytes));
  // Each connection starts from the route's metrics, as in the simulation, not from what an
  // earlier connection to the same peer learnt (Linux caches ssthresh and RTT per destination).
  write_sysctl("net/ipv4/tcp_no_metrics_save", "1");
  report.push_back(
      {"(per-destination metrics cache)", "off", true, "net/ipv4/tcp_no_metrics_save = 1"});

  const auto rto_ms =
      std::max(1L, static_cast<long>(std::lround(tcp.min_rto_ms)));  // the route takes whole ms
  run_program({"ip", "route", "replace", peer, "dev", device, "initcwnd",
               std::to_string(tcp.initial_cwnd_segments), "rto_min", std::to_string(rto_ms) + "ms",
               "congctl", kernel_congestion_control(tcp.congestion_control)});
  report.push_back({"initial_cwnd_segments", std::to_string(tcp.initial_cwnd_segments), true,
                    "route metric initcwnd"});
  report.push_back(
      {"min_rto_ms", fmt::format("{:g}", tcp.min_rto_ms), std::fabs(tcp.min_rto_ms - rto_ms) < 1e-9,
       std::fabs(tcp.min_rto_ms - rto_ms) < 1e-9 ? "route metric rto_min"
                                                 : "route metric rto_min, rounded to whole ms"});
  // Linux's delayed-ACK timer has no knob outside BPF: its minimum ATO is 40 ms, its maximum 200.
  const bool linux_ato = std::fabs(tcp.delayed_ack_ms - 40) < 1e-9;
  report.push_back(
      {"delayed_ack_ms", fmt::format("{:g}", tcp.delayed_ack_ms), linux_ato,
       linux_ato
           ? "the kernel's own minimum ATO (40 ms)"
           : "not applied: the kernel's delayed-ACK timeout (minimum ATO 40 ms) has no setting"});
  if (tcp.congestion_control == scenario::CongestionControl::kBbr) {
    report.push_back({"pacing", "true", true, "BBR's own pacing"});
  } else if (tcp.pacing) {
    // Loss-based control paces only under the fq qdisc, as on the published server.
    try {
      run_program({"tc", "qdisc", "replace", "dev", device, "root", "fq"});
      report.push_back({"pacing", "true", true, "fq qdisc on " + device});
    } catch (const std::exception&) {
      report.push_back({"pacing", "true", false, "not applied: this kernel has no fq qdisc"});
    }
  }
  return report;
}

}  // namespace tb::emulated
