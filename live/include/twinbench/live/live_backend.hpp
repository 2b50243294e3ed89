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
#include "twinbench/runner/run_scenario.hpp"

namespace tb::live {

class LiveBackend {
 public:
  explicit LiveBackend(live::TransportOptions transport_options = {});
  runner::Backend& backend() { return backend_; }

 private:
  live::IoThread io_;
  live::AsioTransportFactory transports_;
  live::AsioResolver resolver_{io_};
  live::RealtimeScheduler scheduler_;
  live::StdThreads threads_;
  live::TempDir downloads_{"twinbench-downloads-"};
  live::FileSinkFactory sinks_{downloads_.path()};
  runner::Backend backend_;
};

}  // namespace tb::live
