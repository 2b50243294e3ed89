#pragma once
// Shared by the emulated-path tests: where the path cannot be built (no CAP_NET_ADMIN,
// namespaces, TUN or congestion control) the test cannot judge: a skip naming the failing step,
// and under CI (which runs as root with /dev/net/tun) a failure (support/real_time.hpp).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "support/real_time.hpp"
#include "twinbench/emulated/emulated_path.hpp"

#define TB_REQUIRE_EMULATED_PATH()                                                     \
  do {                                                                                 \
    if (const auto missing = ::tb::emulated::check_needs({"cubic", "bbr"}))            \
      TB_CANNOT_JUDGE("emulated path unavailable at step " + missing->step + ": " +    \
                      missing->message);                                               \
  } while (0)

namespace tb::testing {

// Every process in the tree under `pid`, and the network namespaces they are in.
inline void descendants(pid_t pid, std::set<pid_t>& pids, std::set<std::string>& namespaces) {
  std::ifstream children("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) +
                         "/children");
  for (pid_t child; children >> child;) {
    pids.insert(child);
    std::error_code ec;
    namespaces.insert(
        std::filesystem::read_symlink("/proc/" + std::to_string(child) + "/ns/net", ec).string());
    descendants(child, pids, namespaces);
  }
}

// Gone, or a zombie waiting for whoever reaps orphans here.
inline bool running(pid_t p) {
  std::ifstream stat("/proc/" + std::to_string(p) + "/stat");
  std::string pid, name, state;
  if (!(stat >> pid >> name >> state)) return false;
  return state != "Z";
}

inline bool namespace_in_use(const std::string& ns) {
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path() / "ns/net", ec).string() == ns) return true;
  }
  return false;
}

// Kills `pid` (SIGKILL), reaps it, and expects every process seen under it (`pids`) to end
// within 5 s, by the death signal the kernel sends them, and their namespaces (`namespaces`, with
// the TUN devices that live only in them) to be gone with them.
inline void kill_and_expect_nothing_left(pid_t pid, const std::set<pid_t>& pids,
                                         const std::set<std::string>& namespaces) {
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const auto gone_by = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < gone_by &&
         std::any_of(pids.begin(), pids.end(), [](pid_t p) { return running(p); }))
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (pid_t p : pids) EXPECT_FALSE(running(p)) << "process " << p << " survived";
  for (const auto& ns : namespaces) EXPECT_FALSE(namespace_in_use(ns)) << ns << " survived";
}

}  // namespace tb::testing
