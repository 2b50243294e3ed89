#pragma once
// Keeps every core of the machine awake while the emulated path runs: one spinning thread per
// core at the lowest priority there is (SCHED_IDLE), which any other thread preempts at once.
//
// Why: on a virtual machine an idle vCPU halts, and a halted vCPU wakes only when the hypervisor
// schedules it again, so a timer that should end a sleep fires milliseconds late. Between the
// packets of a slow link the emulator sleeps, and so do the client's frame loop and workers: on
// the 2-core KVM machine of docs/emulated-path.md the packets left 1.4-3.2 ms late at p99 and the
// client's wake-ups were 1.6-2.7 ms late (a random compare point at 23 Mbit/s); with the cores
// kept awake, 56-60 us and 0.49 ms. A fast link never showed it: the emulator then spins anyway.
#include <atomic>
#include <thread>
#include <vector>

namespace tb::emulated {

class CoresAwake {
 public:
  // One spinner per core this process may run on, each pinned to its core.
  CoresAwake();
  ~CoresAwake();  // stops and joins them
  CoresAwake(const CoresAwake&) = delete;
  CoresAwake& operator=(const CoresAwake&) = delete;

  std::size_t cores() const { return spinners_.size(); }

 private:
  std::atomic<bool> stopping_{false};
  std::vector<std::thread> spinners_;
};

}  // namespace tb::emulated
