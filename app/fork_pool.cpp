#include "fork_pool.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <stdexcept>

namespace tb::app {

std::optional<std::size_t> run_forked(std::size_t count, unsigned jobs, const std::function<int(std::size_t)>& task,
                                      const std::function<void(std::size_t, bool)>& on_done) {
  std::map<pid_t, std::size_t> running;
  std::optional<std::size_t> failed;
  std::size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && running.size() < jobs && !failed) {
      // A child must not inherit (and later flush a second time) what the parent has buffered.
      std::cout.flush();
      std::cerr.flush();
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error("fork failed");
      if (pid == 0) {
        int code = 1;
        try {
          code = task(next);
        } catch (const std::exception& e) {
          std::cerr << "error: " << e.what() << "\n";
        }
        std::cerr.flush();
        std::_Exit(code);
      }
      running[pid] = next++;
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error("waitpid failed");
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const std::size_t index = it->second;
    running.erase(it);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!ok && !failed) failed = index;
    if (on_done) on_done(index, ok);
  }
  return failed;
}

}  // namespace tb::app
