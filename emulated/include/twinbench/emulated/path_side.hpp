#pragma once
// One end of the emulated path: a forked child process in an anonymous network namespace of its
// own, whose only interface besides loopback is a TUN device. The parent gets the TUN's file
// descriptor (SCM_RIGHTS) and moves the packets; the child runs the side's program. The
// namespace and the TUN exist only as long as the child does, and the child dies with the parent
// (PR_SET_PDEATHSIG), so a killed run leaves nothing behind.
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "twinbench/emulated/kernel_tcp.hpp"
#include "twinbench/scenario/network.hpp"

namespace tb::emulated {

// The path's addresses, from the benchmarking range of RFC 2544 (198.18.0.0/15): they exist only
// inside the run's own namespaces.
inline constexpr const char* kClientAddress = "198.18.0.1";
inline constexpr const char* kServerAddress = "198.18.0.2";
inline constexpr const char* kDeviceName = "tb0";

struct SideConfig {
  std::string name;     // "client" or "server", for messages
  std::string address;  // this side's
  std::string peer;     // the other side's
  std::uint32_t mtu_bytes = 1500;
  scenario::ResolvedTcp tcp;
};

// The child's program. It calls `ready()` once it can take traffic (a server: listening); ready()
// hands the TUN to the parent and returns when the parent says go. Whatever the program writes to
// `out_fd` the parent reads with PathSide::read_all(). Its return value is the exit status.
using SideProgram = std::function<int(const std::function<void()>& ready, int out_fd)>;

class PathSide {
 public:
  // Forks the child and waits until it is ready; throws std::runtime_error with the child's
  // reason when it cannot set its side up.
  PathSide(const SideConfig& config, SideProgram program);
  ~PathSide();  // kills the child if it still runs, and reaps it
  PathSide(const PathSide&) = delete;
  PathSide& operator=(const PathSide&) = delete;

  int tun_fd() const { return tun_fd_; }
  pid_t pid() const { return pid_; }
  const std::vector<AppliedSetting>& settings() const { return settings_; }
  void go();               // lets the child's program run on from ready()
  // What the program wrote, until it closes its end; nullopt as soon as `stop` (asked every
  // 20 ms while nothing arrives) holds.
  std::optional<std::string> read_all(const std::function<bool()>& stop = {});
  int wait();              // the program's exit status (-signal when killed)
  void terminate();        // SIGTERM, then SIGKILL after a second

 private:
  pid_t pid_ = -1;
  int control_fd_ = -1;
  int tun_fd_ = -1;
  std::vector<AppliedSetting> settings_;
  bool reaped_ = false;
  int status_ = 0;
};

// Creates the TUN device `name` in the calling process's namespace, up, with `address` and a
// point-to-point route to `peer`, MTU `mtu`; returns its file descriptor (non-blocking).
int create_tun(const std::string& name, const std::string& address, const std::string& peer,
               std::uint32_t mtu);

}  // namespace tb::emulated
