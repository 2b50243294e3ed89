#pragma once
// The C3Http library (v0.4.0), frame-exact. Its request loop polls and re-reads the status in the
// same iteration, yielding only when nothing changed; in BODY it drains chunks until a read comes
// back empty, then yields. Cooperative: a yield is `await process_frame` and completion resumes
// the caller right there. Threaded: the loop runs on a worker whose yield is
// OS.delay_usec(1000); the main thread checks thread.is_alive() once per process_frame, so the
// result arrives at the first frame after the worker ends.
#include <atomic>
#include <memory>
#include <optional>

#include "twinbench/clientcore/client_model.hpp"
#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/clientcore/session.hpp"

namespace tb {

struct C3HttpOptions {
  bool use_threads = false;
  std::size_t download_chunk_size = 65536;
  Duration worker_sleep{1'000'000};  // what OS.delay_usec(1000) lasts on the client OS
  Session* session = nullptr;        // Options.session; null: a new connection per request
  std::shared_ptr<TlsClientContext>
      tls;  // Options.tls_options, for https URLs (refused without it)
};

class C3HttpModel : public ClientModel {
 public:
  C3HttpModel(ModelRuntime runtime, C3HttpOptions options);
  ~C3HttpModel() override;
  void request(const RequestSpec& spec, Callback done) override;
  void cancel() override;
  // await process_frame resumes the caller, cooperative or threaded (check_worker).
  FramePhase completion_phase() const override { return FramePhase::kProcessFrame; }

 private:
  enum class Step { kYield, kDone };
  enum class Phase { kConnect, kSend, kRequesting, kBody };
  bool acquire_client();  // false: the session is at its connection limit; try next frame
  void begin();           // after a client is held
  Step pump();            // runs the request loop until it yields or ends
  Step finish(RequestResult result, std::string error = {});
  void cooperative_resume();
  void check_worker();
  void complete();

  ModelRuntime rt_;
  C3HttpOptions options_;
  RequestSpec spec_;
  Session::Key key_;
  std::string target_;
  Callback done_;
  std::unique_ptr<HttpClient> client_;
  Phase phase_ = Phase::kConnect;
  std::unique_ptr<BodySink> file_;
  Completion completion_;
  std::unique_ptr<Worker> worker_;
  std::atomic<bool> quit_{false};
  std::uint64_t request_serial_ = 0;  // ignores resumptions of a cancelled request
};

}  // namespace tb
