#pragma once
// Godot's HTTPRequest node (scene/main/http_request.cpp), frame-exact. Each request opens a new
// connection (connect_to_host). Cooperative: exactly one _update_connection() per frame, in the
// node-process phase; it switches once on the status read at the top, so every status boundary
// costs a frame, and BODY reads exactly one chunk per frame. Threaded: a worker repeats
// _update_connection() with OS.delay_usec(1) between calls. Either way completion is a deferred
// call (_request_done) that emits request_completed at the next message-queue flush.
#include <atomic>
#include <memory>

#include "twinbench/clientcore/client_model.hpp"
#include "twinbench/clientcore/http_client.hpp"

namespace tb {

struct HttpRequestOptions {
  EngineProfile profile = EngineProfile::kGodot4;
  bool use_threads = false;
  std::size_t download_chunk_size = 65536;  // Godot 4 default; 3.2 used 4096
  Duration worker_sleep{1000};              // what OS.delay_usec(1) lasts on the client OS
  std::shared_ptr<TlsClientContext> tls;    // for https URLs (refused without it)
};

class HttpRequestModel : public ClientModel {
 public:
  HttpRequestModel(ModelRuntime runtime, HttpRequestOptions options);
  ~HttpRequestModel() override;
  void request(const RequestSpec& spec, Callback done) override;
  void cancel() override;
  // request_completed is a deferred call: posted by the worker between frames (flushed after
  // process_frame), or by _update_connection in node process (flushed at the frame's end).
  FramePhase completion_phase() const override {
    return options_.use_threads ? FramePhase::kFirstFlush : FramePhase::kLastFlush;
  }

 private:
  void start_connection();   // _request(): connect_to_host
  bool update_connection();  // one _update_connection(); true when the request is over
  bool finish(RequestResult result, std::string error = {});  // call_deferred(_request_done)
  void request_done(const Completion& completion);

  ModelRuntime rt_;
  HttpRequestOptions options_;
  std::unique_ptr<HttpClient> client_;
  RequestSpec spec_;
  std::string host_, target_;
  std::uint16_t port_ = 0;
  std::shared_ptr<TlsClientContext> tls_;  // set for an https URL
  Callback done_;
  bool request_sent_ = false;
  bool got_response_ = false;
  std::int64_t body_len_ = -1;
  std::uint64_t downloaded_ = 0;
  std::unique_ptr<BodySink> file_;
  Completion completion_;
  FrameLoop::ProcessId process_ = 0;
  std::unique_ptr<Worker> worker_;
  bool worker_started_connection_ = false;
  std::atomic<bool> quit_{false};     // set by cancel() on the main thread, read by the worker
  std::uint64_t request_serial_ = 0;  // ignores deferred calls of a cancelled request
};

}  // namespace tb
