#pragma once
// The twinbench binary run as a user runs it, in a child process: its exit status, its stderr, the
// files it leaves, and signals sent to it mid-run. Every wait is bounded.
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tb::testing {

class ChildProcess {
 public:
  // Starts `program` with `args` in a process group of its own; stdout and stderr go to files in
  // `log_dir`; `env` ("NAME=value") is added to the environment.
  ChildProcess(const std::string& program, const std::vector<std::string>& args,
               const std::filesystem::path& log_dir, const std::vector<std::string>& env = {});
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // kills the group (SIGKILL) and reaps the child if it still runs

  pid_t pid() const { return pid_; }
  // The wait status once the child has ended within `timeout`, else nullopt (still running).
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::filesystem::path stdout_, stderr_;
};

// Polls `condition` every 10 ms until it holds (true) or `timeout` passes (false).
bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// The processes whose parent is `pid` (from /proc), including zombies not yet reaped.
std::vector<pid_t> children_of(pid_t pid);

// The bytes of `file` (a result, a log); empty when it cannot be read.
std::string file_text(const std::filesystem::path& file);

// The regular files under `dir`, recursively, relative to it and sorted; none if it is missing.
std::vector<std::string> files_under(const std::filesystem::path& dir);

// A fresh, empty directory under the system's temporary directory, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix);
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tb::testing
