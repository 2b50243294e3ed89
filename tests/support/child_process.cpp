#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace tb::testing {

namespace fs = std::filesystem;

namespace {


// In the forked child, before exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const std::vector<char*>& argv, const std::vector<char*>& envp,
                             int out, int err) {
  ::setpgid(0, 0);
  ::dup2(out, STDOUT_FILENO);
  ::dup2(err, STDERR_FILENO);
  ::execve(argv[0], argv.data(), envp.data());
  ::_exit(127);
}

// This process's environment with `extra` ("NAME=value") replacing or adding entries.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
  std::vector<std::string> env(extra);
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(extra.begin(), extra.end(),
                     [&](const std::string& x) { return x.starts_with(name); }))
      env.push_back(entry);
  }
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

ChildProcess::ChildProcess(const std::string& program, const std::vector<std::string>& args,
                           const fs::path& log_dir, const std::vector<std::string>& env)
    : stdout_(log_dir / "stdout.txt"), stderr_(log_dir / "stderr.txt") {
  fs::create_directories(log_dir);
  const int out = ::open(stdout_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err = ::open(stderr_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0 || err < 0) throw std::runtime_error("cannot create the child's log files");
  std::vector<std::string> all = {program};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<std::string> environment = environment_with(env);
  const std::vector<char*> argv = pointers(all), envp = pointers(environment);
  pid_ = ::fork();
  if (pid_ == 0) exec_child(argv, envp, out, err);
  ::close(out);
  ::close(err);
  if (pid_ < 0) throw std::runtime_error("fork failed");
  ::setpgid(pid_, pid_);  // also here: the test may signal the group before the child runs
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(-pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  wait_until(
      [&] {
        int status = 0;
        if (!status_ && ::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
        return status_.has_value();
      },
      timeout);
  return status_;
}

std::string file_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ChildProcess::stderr_text() const { return file_text(stderr_); }

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    // /proc/PID/stat: "PID (COMM) STATE PPID ..."; COMM may hold spaces and parentheses.
    const std::string stat = file_text(entry.path() / "stat");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    char state = 0;
    pid_t parent = 0;
    if (rest >> state >> parent && parent == pid) children.push_back(std::stoi(name));
  }
  return children;
}

std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec))
    if (!entry.is_directory()) files.push_back(fs::relative(entry.path(), dir).string());
  std::sort(files.begin(), files.end());
  return files;
}

TempDir::TempDir(const std::string& prefix) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

}  // namespace tb::testing
