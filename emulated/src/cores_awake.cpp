#include "twinbench/emulated/cores_awake.hpp"

#include <pthread.h>
#include <sched.h>

namespace tb::emulated {

CoresAwake::CoresAwake() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &allowed)) continue;
    spinners_.emplace_back([this, cpu] {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      ::pthread_setaffinity_np(pthread_self(), sizeof one, &one);
      const sched_param lowest{.sched_priority = 0};
      ::pthread_setschedparam(pthread_self(), SCHED_IDLE, &lowest);
      while (!stopping_.load(std::memory_order_relaxed)) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      }
    });
  }
}

CoresAwake::~CoresAwake() {
  stopping_ = true;
  for (auto& spinner : spinners_) spinner.join();
}

}  // namespace tb::emulated
