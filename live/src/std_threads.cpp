#include "twinbench/live/std_threads.hpp"

#include <atomic>
#include <chrono>
#include <thread>

namespace tb::live {
namespace {

class StdWorker final : public Worker {
 public:
  StdWorker(std::function<bool()> iteration, Duration sleep, WakeupLateness* lateness)
      : thread_([this, iteration = std::move(iteration), sleep, lateness] {
          using Clock = std::chrono::steady_clock;
          while (!iteration()) {
            if (sleep > Duration::zero()) {
              const auto due = Clock::now() + sleep;
              std::this_thread::sleep_until(due);
              if (lateness != nullptr) lateness->record(Clock::now() - due);
            } else {
              std::this_thread::yield();
            }
          }
          alive_.store(false, std::memory_order_release);
        }) {}
  ~StdWorker() override { join(); }

  bool alive() const override { return alive_.load(std::memory_order_acquire); }
  void join() override {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> alive_{true};  // declared before thread_, so set before the thread starts
  std::thread thread_;
};

}  // namespace

std::unique_ptr<Worker> StdThreads::start(std::function<bool()> iteration, Duration sleep) {
  return std::make_unique<StdWorker>(std::move(iteration), sleep, lateness_);
}

}  // namespace tb::live
