#pragma once
// What every client model (HTTPRequest, C3Http; cooperative or threaded) offers the benchmark
// script, and the seams a model runs on.
#include <cstdint>
#include <functional>
#include <string>

#include "twinbench/clientcore/body_sink.hpp"
#include "twinbench/clientcore/frame_loop.hpp"
#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/threads.hpp"
#include "twinbench/clientcore/transport.hpp"

namespace tb {

enum class EngineProfile { kGodot4, kGodot3 };

// Godot's HTTPRequest::Result, which C3Http reports too.
enum class RequestResult {
  kSuccess,
  kChunkedBodySizeMismatch,
  kCantConnect,
  kCantResolve,
  kConnectionError,
  kTlsHandshakeError,
  kNoResponse,
  kBodySizeLimitExceeded,
  kRequestFailed,
  kDownloadFileCantOpen,
  kDownloadFileWriteError,
  kCancelled,
};
const char* to_string(RequestResult r);

struct RequestSpec {
  std::string url;
  std::string method = "GET";
  std::string body;
  std::string download_file;  // non-empty: stream the body to this sink name
};

struct Completion {
  RequestResult result = RequestResult::kSuccess;
  int http_status = 0;
  std::uint64_t body_bytes = 0;
  bool reused_connection = false;
  std::string error;  // details for a non-success result
};

// The engine around a model: its frame loop and the backend's seams.
struct ModelRuntime {
  FrameLoop& frames;
  Threads& threads;
  TransportFactory& transports;
  Resolver& resolver;
  BodySinkFactory* sinks = nullptr;  // needed for RequestSpec::download_file
};

class ClientModel {
 public:
  using Callback = std::function<void(const Completion&)>;
  virtual ~ClientModel() = default;
  // Called by the script on the main thread. `done` runs on the main thread at the moment the
  // script's `await` would resume in the engine (the phase depends on the model).
  virtual void request(const RequestSpec& spec, Callback done) = 0;
  // Abandons the request in flight, if any; `done` is not called.
  virtual void cancel() = 0;
  // The frame phase in which `done` runs when a request ends after waiting on the network (the
  // script then starts its next request there). A split simulation starts the next step in it
  // when this model's step ran elsewhere (runner::StepsElsewhere).
  virtual FramePhase completion_phase() const = 0;
};

}  // namespace tb
