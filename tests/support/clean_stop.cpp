#include "support/clean_stop.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "support/child_process.hpp"

namespace tb::testing {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::vector<std::string> with_out(std::vector<std::string> args, const fs::path& out) {
  for (auto& a : args)
    if (const auto at = a.find("{out}"); at != std::string::npos) a.replace(at, 5, out.string());
  return args;
}

// Files a stopped sweep may keep: its manifest and finished points; nothing hidden (temporary).
bool kept_by_a_stopped_sweep(const std::string& file) {
  const std::string name = fs::path(file).filename().string();
  return file == "sweep.textproto" || (file.starts_with("points/") && !name.starts_with('.'));
}

}  // namespace

void expect_clean_stop(const StoppableCommand& c, int signal, bool whole_group) {
  const TempDir work("twinbench-signal");
  const fs::path out = work.path() / "out", tmp = work.path() / "tmp";
  fs::create_directories(tmp);
  ChildProcess twinbench(TWINBENCH_BINARY, with_out(c.args, out), work.path() / "logs",
                         {"TMPDIR=" + tmp.string()});
  std::vector<pid_t> workers;
  ASSERT_TRUE(wait_until(
      [&] {
        workers = children_of(twinbench.pid());
        return c.under_way.empty()
                   ? !workers.empty()
                   : twinbench.stderr_text().find(c.under_way) != std::string::npos;
      },
      120s))
      << "not under way after 120 s:\n"
      << twinbench.stderr_text();
  ASSERT_EQ(::kill(whole_group ? -twinbench.pid() : twinbench.pid(), signal), 0);
  const auto status = twinbench.wait_for(60s);
  ASSERT_TRUE(status) << "still running 60 s after the signal";
  const std::string err = twinbench.stderr_text();
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 128 + signal)
      << "wait status " << *status << "\n"
      << err;
  EXPECT_NE(err.find(std::string("interrupted by SIG") + ::sigabbrev_np(signal)), std::string::npos)
      << err;
  EXPECT_EQ(children_of(::getpid()), std::vector<pid_t>{}) << "a worker was orphaned";
  for (const pid_t pid : workers)
    EXPECT_FALSE(fs::exists("/proc/" + std::to_string(pid))) << "worker " << pid << " remains";
  EXPECT_EQ(files_under(tmp), std::vector<std::string>{}) << "temporary files remain";
  for (const std::string& file : files_under(out))
    EXPECT_TRUE(c.name == "sweep" && kept_by_a_stopped_sweep(file)) << file << " was written";
}

}  // namespace tb::testing
