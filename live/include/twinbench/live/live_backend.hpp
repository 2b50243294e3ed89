#pragma once
// The live backend assembled: Asio sockets on an I/O thread, the real clock, real worker threads,
// and downloads streamed to files in a temporary directory that is checked and cleaned.
#include <memory>

#include "twinbench/live/asio_resolver.hpp"
#include "twinbench/live/asio_transport.hpp"
#include "twinbench/live/file_sink.hpp"
#include "twinbench/live/io_thread.hpp"
#include "twinbench/live/realtime_scheduler.hpp"
#include "twinbench/live/std_threads.hpp"
#include "twinbench/live/wakeup_lateness.hpp"
#include "twinbench/runner/run_scenario.hpp"

namespace tb::live {

class LiveBackend {
 public:
  explicit LiveBackend(live::TransportOptions transport_options = {});
  runner::Backend& backend() { return backend_; }
  // How late the frame loop's and the workers' timed wake-ups came, so far.
  WakeupSummary wakeup_lateness() const { return lateness_.summary(); }
  // The same, into a run's results.
  void record_host_timing(twinbench::RunInfo& run) const;

 private:
  WakeupLateness lateness_;  // before the scheduler and threads that record into it
  live::IoThread io_;
  live::AsioTransportFactory transports_;
  live::AsioResolver resolver_{io_};
  live::RealtimeScheduler scheduler_{&lateness_};
  live::StdThreads threads_{&lateness_};
  live::TempDir downloads_{"twinbench-downloads-"};
  live::FileSinkFactory sinks_{downloads_.path()};
  runner::Backend backend_;
};

}  // namespace tb::live
