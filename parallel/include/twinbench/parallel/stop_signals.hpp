#pragma once
// SIGINT and SIGTERM as a request to stop cleanly. While a StopOnSignals lives, the two signals
// only record themselves; the worker pool (fork_pool.hpp) notices within a few milliseconds, kills
// and reaps its children and throws Interrupted, whose unwinding removes temporary files and
// directories; the command line then exits 128 + the signal (130, 143). Nothing is written after
// the signal: result files are written only once all work has finished.
#include <stdexcept>

namespace tb::parallel {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }

 private:
  int signal_;
};

class StopOnSignals {
 public:
  StopOnSignals();   // installs the handlers
  ~StopOnSignals();  // restores the previous handlers and forgets the signal
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

// The signal received while the StopOnSignals lives, or 0.
int stop_signal();

// Throws Interrupted if a signal was received.
void throw_if_stopped();

// In a forked worker, first thing: the default actions back (a signal kills it), and death when
// the parent dies, however it dies (kill -9 included). Returns false if the parent has already
// gone; the worker should then exit at once.
bool become_worker(int parent);

}  // namespace tb::parallel
