#include "twinbench/parallel/fork_pool.hpp"

#include "twinbench/parallel/stop_signals.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <iostream>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tb::parallel {

namespace {

// Waits for any child to end: its pid and wait status, polling so that a stop request (a signal)
// is seen within a few milliseconds whatever the children do.
std::pair<pid_t, int> wait_for_a_child(const std::function<void()>& while_waiting) {
  while (true) {
    throw_if_stopped();
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno == EINTR) continue;
    if (pid < 0) throw std::runtime_error("waitpid failed");
    if (pid > 0) return {pid, status};
    if (while_waiting) {
      while_waiting();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

}  // namespace

std::optional<std::size_t> run_forked(
    std::size_t count, unsigned jobs, const std::function<int(std::size_t)>& task,
    const std::function<void(std::size_t, bool)>& on_done,
    const std::function<std::vector<std::size_t>(std::size_t)>& group,
    const std::function<void()>& while_waiting) {
  std::map<pid_t, std::size_t> running;
  std::optional<std::size_t> failed;
  std::vector<bool> launched(count, false);
  const pid_t parent = ::getpid();
  const auto launch = [&](std::size_t i) {
    // A child must not inherit (and later flush a second time) what the parent has buffered.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      if (!become_worker(parent)) std::_Exit(1);
      int code = 1;
      try {
        code = task(i);
      } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
      } catch (...) {  // nothing may unwind into the parent's frames, which this child shares
        std::cerr << "error: task " << i << " threw a non-standard exception\n";
      }
      std::cerr.flush();
      std::_Exit(code);
    }
    running[pid] = i;
    launched[i] = true;
  };
  std::size_t next = 0;  // the first task not launched yet, or count
  const auto advance = [&] {
    while (next < count && launched[next]) ++next;
  };
  // If anything here throws (fork, waitpid, a callback, a stop request), the children still
  // running are stopped and reaped: none outlives the call, which may then remove what they use.
  struct StopRunning {
    std::map<pid_t, std::size_t>& running;
    ~StopRunning() {
      for (const auto& [pid, index] : running) ::kill(pid, SIGKILL);
      for (const auto& [pid, index] : running) {
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
    }
  } stop_running{running};
  while (true) {
    throw_if_stopped();
    for (advance(); !failed && running.size() < jobs && next < count; advance()) {
      const std::size_t i = next;
      launch(i);
      if (group) {
        for (const std::size_t j : group(i)) {
          if (j < count && !launched[j]) launch(j);
        }
      }
    }
    if (running.empty()) break;  // all done, or a failure stopped the launches
    const auto [pid, status] = wait_for_a_child(while_waiting);
    // A child killed by the same signal (Ctrl-C reaches the whole process group) is no failure.
    throw_if_stopped();
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

}  // namespace tb::parallel
