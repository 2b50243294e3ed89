#pragma once
// A server run as a child process (`twinbench serve ... --ready-fd N`), for measurements that
// must not share a process with the server: started, waited for until it says where it listens,
// and stopped with SIGTERM (SIGKILL if it does not exit in time). It also dies with its parent.
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace tb::loadbench {

class ServerProcess {
 public:
  // Runs `argv` (argv[0] a path) with `--ready-fd <fd>` appended and waits up to `ready_timeout`
  // for the URL line. Throws std::runtime_error if it cannot start, exits or stays silent.
  ServerProcess(std::vector<std::string> argv, std::chrono::milliseconds ready_timeout);
  ~ServerProcess();  // stop()
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  const std::string& url() const { return url_; }
  pid_t pid() const { return pid_; }
  // SIGTERM, then SIGKILL after two seconds; returns the wait status. Idempotent.
  int stop();

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  std::string url_;
};

// This process's executable (/proc/self/exe), to start a `twinbench serve` beside it.
std::string own_executable();

}  // namespace tb::loadbench
