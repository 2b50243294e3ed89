#pragma once
// The live load generator: `clients` keep-alive connections, each keeping `window` requests
// pipelined (PipelinedExchange), spread over `threads` io_contexts with one thread each, timed
// in-process with the steady clock. A connection that fails is counted as an error and, while
// the run lasts, replaced after a pause.
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "twinbench/loadbench/pipelined_exchange.hpp"
#include "twinbench/clientcore/url.hpp"

namespace tb::loadbench {

struct LoadOptions {
  Url server;                                                // http or https, host and port
  std::shared_ptr<const std::vector<LoadRequest>> requests;  // sent in turn on every connection
  unsigned clients = 16;
  unsigned window = 16;
  unsigned threads = 1;  // the generator's own threads (io_contexts)
  std::chrono::nanoseconds warmup = std::chrono::milliseconds(250);
  std::chrono::nanoseconds duration = std::chrono::seconds(1);
  bool nodelay = false;        // TCP_NODELAY on the generator's sockets
  std::string trusted_ca_pem;  // https: the root to trust (empty: the system's)
  // A connect or TLS handshake taking longer is an error; the connection is retried.
  std::chrono::nanoseconds connect_timeout = std::chrono::seconds(2);
};

struct LoadMeasurement {
  std::chrono::nanoseconds measured{0};         // the measured window as it ran
  std::vector<double> latencies_ms;             // ascending; responses completed in the window
  std::uint64_t body_bytes = 0;                 // response bodies completed in the window
  std::uint64_t connections_opened = 0;         // over the whole run, warmup included
  std::map<std::string, std::uint64_t> errors;  // by kind, over the whole run
  std::uint64_t error_count() const;
};

// Runs warmup + duration and returns; bounded by that plus a second to close. Throws
// std::runtime_error if the TLS settings are unusable (a bad CA); a server that refuses, closes,
// stalls or answers wrongly only shows in `errors`.
LoadMeasurement run_load(const LoadOptions& options);

}  // namespace tb::loadbench
