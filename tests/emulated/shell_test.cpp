// `twinbench shell`: a command of the user's behind the scenario's link. It sees the link's round
// trip, its exit status is the shell's, --user drops root, a killed shell leaves nothing behind,
// and a machine without the capability gets exit 2 naming the step.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "path_fixture.hpp"
#include "support/child_process.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

// Single-quoted for /bin/sh.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

class Shell : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tb-shell-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(scenario()) << R"(
        name: "forty"
        network {
          link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20
                 downlink_mbps: 20 uplink_mbps: 20 }
          server_tcp { congestion_control: BBR }
        }
    )";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path scenario() const { return dir_ / "forty.textproto"; }

  // Runs `prefix twinbench shell SCENARIO options -- sh -c script`; its exit status, with its
  // stdout and stderr in out_ and err_.
  int shell(const std::string& script, const std::string& options = "",
            const std::string& prefix = "") {
    const std::string command = prefix + " " TWINBENCH_BINARY " shell " + scenario().string() +
                                " " + options + " -- sh -c " + quoted(script) + " > " +
                                (dir_ / "out").string() + " 2> " + (dir_ / "err").string();
    const int status = std::system(command.c_str());
    out_ = testing::file_text(dir_ / "out");
    err_ = testing::file_text(dir_ / "err");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
  std::string out_, err_;
};

// bash's /dev/tcp connects; the date calls around it add a few hundred microseconds.
constexpr const char* kTimedConnect =
    "t0=$(date +%s%N); bash -c 'exec 3<>/dev/tcp/$TWINBENCH_SERVER_ADDRESS/$TWINBENCH_SERVER_PORT'"
    " && t1=$(date +%s%N) && echo $(( (t1 - t0) / 1000 ))";

TEST_F(Shell, ACommandBehindA40MsLinkSeesA40MsConnect) {
  TB_REQUIRE_EMULATED_PATH();
  ASSERT_EQ(shell(std::string(kTimedConnect) + "; echo \"$TWINBENCH_SERVER_URL\"",
                  "--report " + (dir_ / "report.json").string()),
            0)
      << err_;
  std::istringstream lines(out_);
  double connect_us = 0;
  std::string url;
  lines >> connect_us >> url;
  // One round trip of the link, plus a bash and two date processes started on the way.
  EXPECT_GE(connect_us, 40'000) << out_;
  EXPECT_LT(connect_us, 60'000) << out_;
  EXPECT_EQ(url, "http://198.18.0.2:8927");
  EXPECT_NE(err_.find("twinbench shell: exit 0; link 40 ms RTT, 20/20 Mbit/s"), std::string::npos)
      << err_;
  const std::string report = testing::file_text(dir_ / "report.json");
  EXPECT_NE(report.find("\"lateness_p99_us\""), std::string::npos) << report;
  EXPECT_NE(report.find("\"valid\""), std::string::npos) << report;
  EXPECT_NE(report.find("congctl"), std::string::npos) << report;
}

TEST_F(Shell, TheCommandsExitStatusIsTheShells) {
  TB_REQUIRE_EMULATED_PATH();
  EXPECT_EQ(shell("exit 7"), 7) << err_;
  EXPECT_NE(err_.find("twinbench shell: exit 7;"), std::string::npos) << err_;
  EXPECT_EQ(shell("kill -TERM $$"), 128 + SIGTERM) << err_;
  EXPECT_EQ(shell("exec /nonexistent/command"), 127) << err_;
}

TEST_F(Shell, HttpsGivesTheCommandTheCaFile) {
  TB_REQUIRE_EMULATED_PATH();
  ASSERT_EQ(shell("echo \"$TWINBENCH_SERVER_URL\"; grep -c 'BEGIN CERTIFICATE' \"$TWINBENCH_CA_FILE\"",
                  "--tls"),
            0)
      << err_;
  EXPECT_EQ(out_, "https://198.18.0.2:8927\n1\n");
}

TEST_F(Shell, UserDropsRoot) {
  TB_REQUIRE_EMULATED_PATH();
  if (::geteuid() != 0) TB_CANNOT_JUDGE("--user needs root to drop from");
  ASSERT_EQ(shell("id -u; id -g", "--user nobody"), 0) << err_;
  std::istringstream ids(out_);
  unsigned uid = 0, gid = 0;
  ids >> uid >> gid;
  EXPECT_NE(uid, 0u) << out_;
  EXPECT_NE(gid, 0u) << out_;
  EXPECT_EQ(shell("true", "--user no-such-user-here"), 2);
  EXPECT_NE(err_.find("--user: no user named \"no-such-user-here\""), std::string::npos) << err_;
}

TEST_F(Shell, AUsersServerCommandRunsOnTheFarSide) {
  TB_REQUIRE_EMULATED_PATH();
  // A server program of the user's, started as any would be: here the benchmark server itself.
  const std::string server = std::string(TWINBENCH_BINARY) +
                             " serve --bind $TWINBENCH_SERVER_ADDRESS --port $TWINBENCH_SERVER_PORT";
  ASSERT_EQ(shell(kTimedConnect, "--server-command " + quoted(server) + " --server-port 9100"), 0)
      << err_;
  EXPECT_GE(std::stod(out_), 40'000) << out_;
  EXPECT_EQ(shell("true", "--server-command 'exit 3'"), 1);
  EXPECT_NE(err_.find("the server command ended (status 3) before it listened"), std::string::npos)
      << err_;
}

TEST_F(Shell, WithoutTheCapabilityItExitsTwoNamingTheStep) {
  if (::geteuid() != 0) {
    EXPECT_EQ(shell("true"), 2);
    EXPECT_NE(err_.find("CAP_NET_ADMIN"), std::string::npos) << err_;
    return;
  }
  // Root without CAP_NET_ADMIN in its bounding set: what a container without it looks like.
  EXPECT_EQ(shell("true", "", "setpriv --bounding-set=-net_admin --inh-caps=-net_admin"), 2)
      << err_;
  EXPECT_NE(err_.find("CAP_NET_ADMIN"), std::string::npos) << err_;
  EXPECT_NE(err_.find("[step: capability]"), std::string::npos) << err_;
}

TEST_F(Shell, AKilledShellLeavesNoProcessNamespaceOrInterfaceBehind) {
  TB_REQUIRE_EMULATED_PATH();
  std::error_code ec;
  const std::string own_namespace = fs::read_symlink("/proc/self/ns/net", ec).string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(TWINBENCH_BINARY, "twinbench", "shell", scenario().c_str(), "-q", "--", "sleep", "60",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::set<pid_t> pids;
  std::set<std::string> namespaces;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  bool sleeping = false;
  while (std::chrono::steady_clock::now() < deadline && !sleeping) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    testing::descendants(pid, pids, namespaces);
    for (pid_t p : pids)
      sleeping =
          sleeping || testing::file_text("/proc/" + std::to_string(p) + "/comm") == "sleep\n";
  }
  namespaces.erase(own_namespace);
  namespaces.erase("");
  ASSERT_TRUE(sleeping) << "the command never started";
  ASSERT_GE(namespaces.size(), 2u) << "the two sides are in namespaces of their own";
  testing::kill_and_expect_nothing_left(pid, pids, namespaces);
}

}  // namespace
}  // namespace tb
