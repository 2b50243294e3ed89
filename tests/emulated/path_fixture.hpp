#pragma once
// Shared by the emulated-path tests: where the path cannot be built (no CAP_NET_ADMIN,
// namespaces, TUN or congestion control) the test cannot judge: a skip naming the failing step,
// and under CI (which runs as root with /dev/net/tun) a failure (support/real_time.hpp).
#include <gtest/gtest.h>

#include <sys/types.h>

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

}  // namespace tb::testing
