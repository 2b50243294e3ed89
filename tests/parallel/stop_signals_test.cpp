// The worker pool's stop (parallel/stop_signals.hpp): a signal under StopOnSignals kills and reaps
// every worker and throws Interrupted; workers die with their parent, even on kill -9.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <set>
#include <thread>

#include "twinbench/parallel/fork_pool.hpp"
#include "twinbench/parallel/stop_signals.hpp"

namespace tb {
namespace {

// A pipe whose read end does not block: workers write their pid into it.
struct PidPipe {
  int fds[2] = {-1, -1};
  PidPipe() {
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  }
  ~PidPipe() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void send() const {
    const pid_t pid = ::getpid();
    if (::write(fds[1], &pid, sizeof pid) != sizeof pid) std::_Exit(5);
  }
  void receive(std::set<pid_t>& into) const {
    pid_t pid = 0;
    while (::read(fds[0], &pid, sizeof pid) == sizeof pid) into.insert(pid);
  }
};

// A worker that reports itself, then outlasts any test unless killed.
int report_and_wait(const PidPipe& pids) {
  pids.send();
  ::sleep(30);
  return 0;
}

bool reaped(pid_t pid) { return ::kill(pid, 0) != 0 && errno == ESRCH; }

TEST(StopSignals, ASignalKillsAndReapsEveryWorker) {
  for (const int signal : {SIGINT, SIGTERM}) {
    const parallel::StopOnSignals stop;
    const PidPipe pipe;
    std::set<pid_t> workers;
    int caught = 0;
    const auto started = std::chrono::steady_clock::now();
    try {
      parallel::run_forked(
          4, 2, [&](std::size_t) { return report_and_wait(pipe); }, {}, {},
          [&] {
            pipe.receive(workers);
            if (workers.size() == 2) ::raise(signal);  // both running: stop now
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          });
    } catch (const parallel::Interrupted& e) {
      caught = e.signal();
    }
    EXPECT_EQ(caught, signal);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(20))
        << "the workers were waited for, not stopped";
    ASSERT_EQ(workers.size(), 2u);  // no third launched after the signal
    for (const pid_t pid : workers) EXPECT_TRUE(reaped(pid)) << pid;
  }
}

TEST(StopSignals, ASignalBeforeTheCallLaunchesNothing) {
  const parallel::StopOnSignals stop;
  ::raise(SIGINT);
  bool ran = false;
  EXPECT_THROW(parallel::run_forked(
                   1, 1, [&](std::size_t) { return 0; }, [&](std::size_t, bool) { ran = true; }),
               parallel::Interrupted);
  EXPECT_FALSE(ran);
}

TEST(StopSignals, OutsideStopOnSignalsNothingIsRecorded) {
  { const parallel::StopOnSignals stop; }
  EXPECT_EQ(parallel::stop_signal(), 0);
  EXPECT_NO_THROW(parallel::throw_if_stopped());
}

// The pool's process is killed with -9: its worker, re-parented to this test process (a
// subreaper), is killed too (PR_SET_PDEATHSIG) instead of running on.
TEST(StopSignals, WorkersDieWithTheirParent) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const PidPipe pipe;
  const pid_t pool = ::fork();
  ASSERT_GE(pool, 0);
  if (pool == 0) {
    parallel::run_forked(1, 1, [&](std::size_t) { return report_and_wait(pipe); });
    std::_Exit(0);
  }
  std::set<pid_t> workers;
  for (int i = 0; i < 2000 && workers.empty(); ++i) {  // up to 20 s
    pipe.receive(workers);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pool, SIGKILL);
  ::waitpid(pool, nullptr, 0);
  ASSERT_EQ(workers.size(), 1u);
  const pid_t worker = *workers.begin();
  int status = 0;
  pid_t ended = 0;
  for (int i = 0; i < 1000 && ended == 0; ++i) {  // up to 10 s; it would otherwise sleep 30 s
    ended = ::waitpid(worker, &status, WNOHANG);
    if (ended == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (ended == 0) {  // clean up before failing
    ::kill(worker, SIGKILL);
    ::waitpid(worker, nullptr, 0);
  }
  ASSERT_EQ(ended, worker) << "the worker outlived its parent";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
}

}  // namespace
}  // namespace tb
