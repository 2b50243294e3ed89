// SIGINT and SIGTERM during run (simulated and live), sweep, reproduce and calibrate (the real
// binary, mid-run; the emulated run and compare are in tests/emulated/signal_test.cpp): the
// workers are killed and reaped, no temporary or partial file is left, and the exit status is
// 128 + the signal. A sweep killed with -9 resumes from the points it had finished. serve stops
// on either signal with every connection closed and the same exit status.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/child_process.hpp"
#include "support/clean_stop.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const std::string kSource = TWINBENCH_SOURCE_DIR;

// Each command with what makes it run long enough to be stopped mid-run; {out} is the output.
const std::vector<testing::StoppableCommand> kCases = {
    {"run", {"run", "--runs", "200", "--jobs", "2", "--out", "{out}"}, ""},
    {"sweep",
     {"sweep", kSource + "/scenarios/sweeps/rtt_rate_fps.textproto", "--jobs", "2", "--out",
      "{out}"},
     ""},
    {"reproduce", {"reproduce", "--jobs", "2", "--out", "{out}"}, ""},
    {"calibrate",
     {"calibrate", "--runs", "1", "--jobs", "2", "--out", "{out}/fitted.textproto"},
     ""},
    // Real sockets on a frame loop in this process (its own server on loopback): no workers.
    {"run_live", {"run", "--backend", "live", "--runs", "200", "--out", "{out}"}, " samples, "},
};

class Subreaper : public ::testing::Test {
 protected:
  // Orphaned workers would be re-parented to this process, where the test sees them.
  static void SetUpTestSuite() { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
  static void TearDownTestSuite() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

class SignalTest
    : public Subreaper,
      public ::testing::WithParamInterface<std::tuple<testing::StoppableCommand, int>> {};

TEST_P(SignalTest, StopsTheWorkersLeavesNoPartialFileAndExits128PlusTheSignal) {
  const auto& [c, signal] = GetParam();
  testing::expect_clean_stop(c, signal, /*whole_group=*/false);
}

TEST_F(Subreaper, CtrlCToTheProcessGroupStopsEveryCommandAsCleanly) {
  for (const testing::StoppableCommand& c : kCases) {
    SCOPED_TRACE(c.name);
    testing::expect_clean_stop(c, SIGINT, /*whole_group=*/true);
  }
}

std::string command_and_signal(
    const ::testing::TestParamInfo<std::tuple<testing::StoppableCommand, int>>& info) {
  return std::get<0>(info.param).name + "_SIG" + ::sigabbrev_np(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Commands, SignalTest,
                         ::testing::Combine(::testing::ValuesIn(kCases),
                                            ::testing::Values(SIGINT, SIGTERM)),
                         command_and_signal);

// A TCP connection to 127.0.0.1:port, or -1 when nothing accepts one there.
int connect_loopback(std::uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return s;
  ::close(s);
  return -1;
}

// A loopback port nothing uses now: the kernel's choice for a socket bound to port 0. (A port
// derived from the pid could be an ephemeral port another test's connection holds: "Address already
// in use" on a loaded CI machine.)
std::uint16_t free_loopback_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof a;
  const bool bound = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                     ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &length) == 0;
  ::close(s);
  return bound ? ntohs(a.sin_port) : 0;
}

bool listening(std::uint16_t port) {
  const int s = connect_loopback(port);
  if (s >= 0) ::close(s);
  return s >= 0;
}

class ServeSignal : public ::testing::TestWithParam<int> {};

TEST_P(ServeSignal, ServeStopsWithEveryConnectionClosedAndExits128PlusTheSignal) {
  const int signal = GetParam();
  const testing::TempDir work("twinbench-serve-signal");
  const std::uint16_t port = free_loopback_port();
  ASSERT_NE(port, 0);
  testing::ChildProcess serve(TWINBENCH_BINARY, {"serve", "--port", std::to_string(port)},
                              work.path() / "logs");
  ASSERT_TRUE(testing::wait_until([&] { return listening(port); }, 30s)) << serve.stderr_text();
  // A kept-alive client, open when the signal comes.
  const int client = connect_loopback(port);
  ASSERT_GE(client, 0);
  ASSERT_EQ(::kill(serve.pid(), signal), 0);
  const auto status = serve.wait_for(30s);
  ASSERT_TRUE(status) << "still running 30 s after the signal";
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + signal)
      << "wait status " << *status << "\n"
      << serve.stderr_text();
  EXPECT_NE(serve.stderr_text().find(std::string("interrupted by SIG") + ::sigabbrev_np(signal)),
            std::string::npos)
      << serve.stderr_text();
  char byte = 0;
  EXPECT_EQ(::read(client, &byte, 1), 0) << "the kept-alive connection was closed";
  ::close(client);
  EXPECT_FALSE(listening(port));
}

INSTANTIATE_TEST_SUITE_P(Signals, ServeSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::string("SIG") + ::sigabbrev_np(info.param);
                         });

std::size_t finished_points(const fs::path& sweep) {
  std::size_t n = 0;
  for (const std::string& file : testing::files_under(sweep / "points"))
    n += file.ends_with(".pb") && !file.starts_with('.') ? 1 : 0;
  return n;
}

// kill -9 leaves the sweep no chance to clean up: its workers die with it (PR_SET_PDEATHSIG), and
// a re-run skips the points finished, removes what the killed workers were writing, and completes.
TEST(SignalKill, ASweepKilledWithMinus9Resumes) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const testing::TempDir work("twinbench-kill9");
  const fs::path out = work.path() / "out";
  const std::vector<std::string> args = {
      "sweep",  kSource + "/scenarios/sweeps/rtt_rate_fps.textproto",
      "--axis", "rtt=20ms,40ms",
      "--axis", "rate=10Mbit,100Mbit",
      "--axis", "fps=30,60",
      "--jobs", "2",
      "--out",  out.string()};
  {
    testing::ChildProcess first(TWINBENCH_BINARY, args, work.path() / "first");
    ASSERT_TRUE(testing::wait_until([&] { return finished_points(out) >= 1; }, 120s))
        << first.stderr_text();
    ASSERT_EQ(::kill(first.pid(), SIGKILL), 0);
    const auto status = first.wait_for(30s);
    ASSERT_TRUE(status && WIFSIGNALED(*status));
  }
  // The orphaned workers end at once (else they would finish their points, seconds later).
  EXPECT_TRUE(testing::wait_until(
      [] {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        return testing::children_of(::getpid()).empty();
      },
      5s));
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  const std::size_t finished = finished_points(out);
  ASSERT_LT(finished, 8u) << "the sweep was not killed mid-run";

  testing::ChildProcess second(TWINBENCH_BINARY, args, work.path() / "second");
  const auto status = second.wait_for(300s);
  ASSERT_TRUE(status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0) << second.stderr_text();
  EXPECT_NE(second.stderr_text().find("ran " + std::to_string(8 - finished) + ", skipped " +
                                      std::to_string(finished)),
            std::string::npos)
      << second.stderr_text();
  EXPECT_EQ(finished_points(out), 8u);
  for (const std::string& file : testing::files_under(out / "points"))
    EXPECT_FALSE(file.starts_with('.')) << file << ": a killed worker's temporary file remains";
  std::ifstream csv(out / "sweep.csv");
  std::size_t rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 1u + 8u * 4u * 2u);  // header, then points x variants x body sizes
}

}  // namespace
}  // namespace tb
