#include "twinbench/parallel/stop_signals.hpp"

#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <string>

namespace tb::parallel {

namespace {

volatile sig_atomic_t received = 0;
struct sigaction previous_int, previous_term;

void record(int signal) { received = signal; }

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(std::string("interrupted by SIG") + ::sigabbrev_np(signal)),
      signal_(signal) {}

StopOnSignals::StopOnSignals() {
  received = 0;
  struct sigaction action {};
  action.sa_handler = record;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking call returns EINTR and the caller looks
  ::sigaction(SIGINT, &action, &previous_int);
  ::sigaction(SIGTERM, &action, &previous_term);
}

StopOnSignals::~StopOnSignals() {
  ::sigaction(SIGINT, &previous_int, nullptr);
  ::sigaction(SIGTERM, &previous_term, nullptr);
  received = 0;  // outside a StopOnSignals nothing stops
}

int stop_signal() { return received; }

void throw_if_stopped() {
  if (received != 0) throw Interrupted(received);
}

bool become_worker(int parent) {
  ::signal(SIGINT, SIG_DFL);
  ::signal(SIGTERM, SIG_DFL);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The parent may have died before prctl: then this process was already re-parented.
  return ::getppid() == parent;
}

}  // namespace tb::parallel
