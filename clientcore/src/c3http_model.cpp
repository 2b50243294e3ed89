#include "twinbench/clientcore/c3http_model.hpp"

#include "twinbench/clientcore/url.hpp"

namespace tb {

namespace {
// The loop re-reads the status after every poll; a bound keeps a misbehaving transport from
// spinning one iteration forever.
constexpr int kMaxStepsPerResume = 1'000'000;
}  // namespace

C3HttpModel::C3HttpModel(ModelRuntime runtime, C3HttpOptions options)
    : rt_(runtime), options_(options) {}

C3HttpModel::~C3HttpModel() { cancel(); }

void C3HttpModel::request(const RequestSpec& spec, Callback done) {
  cancel();
  spec_ = spec;
  done_ = std::move(done);
  completion_ = Completion{};
  phase_ = Phase::kConnect;
  quit_ = false;
  const auto url = parse_url(spec.url);
  if (!url || (url->tls() && !options_.tls)) {
    finish(RequestResult::kRequestFailed,
           (url ? "https URL without a TLS configuration: " : "unsupported URL: ") + spec.url);
    complete();
    return;
  }
  key_ = Session::Key{url->host, url->port, url->tls()};
  target_ = url->target;
  if (!acquire_client()) {
    const auto serial = request_serial_;
    rt_.frames.await_process_frame([this, serial] {
      if (serial == request_serial_) request(spec_, std::move(done_));
    });
    return;
  }
  begin();
}

bool C3HttpModel::acquire_client() {
  HttpClientOptions client_options;
  client_options.read_chunk_size = options_.download_chunk_size;
  if (options_.session) {
    auto lease = options_.session->acquire(key_, rt_.transports, rt_.resolver, client_options);
    if (!lease) return false;
    client_ = std::move(lease->client);
    completion_.reused_connection = lease->reused;
  } else {
    client_ = std::make_unique<HttpClient>(rt_.transports, rt_.resolver, client_options);
  }
  if (client_->status() != HttpStatus::kConnected) {
    client_->connect_to_host(key_.host, key_.port, key_.tls ? options_.tls : nullptr);
  }
  return true;
}

void C3HttpModel::begin() {
  if (options_.use_threads) {
    // The worker runs the whole loop; the main thread looks once per process_frame.
    worker_ =
        rt_.threads.start([this] { return quit_ || pump() == Step::kDone; }, options_.worker_sleep);
    const auto serial = request_serial_;
    rt_.frames.await_process_frame([this, serial] {
      if (serial == request_serial_) check_worker();
    });
  } else if (pump() == Step::kDone) {
    complete();  // finished without waiting: the caller resumes at once
  } else {
    const auto serial = request_serial_;
    rt_.frames.await_process_frame([this, serial] {
      if (serial == request_serial_) cooperative_resume();
    });
  }
}

void C3HttpModel::cooperative_resume() {
  if (pump() == Step::kDone) {
    complete();
    return;
  }
  const auto serial = request_serial_;
  rt_.frames.await_process_frame([this, serial] {
    if (serial == request_serial_) cooperative_resume();
  });
}

void C3HttpModel::check_worker() {
  if (worker_->alive()) {
    const auto serial = request_serial_;
    rt_.frames.await_process_frame([this, serial] {
      if (serial == request_serial_) check_worker();
    });
    return;
  }
  worker_->join();
  worker_.reset();
  complete();
}

C3HttpModel::Step C3HttpModel::pump() {
  HttpClient& c = *client_;
  for (int i = 0; i < kMaxStepsPerResume; ++i) {
    switch (phase_) {
      case Phase::kConnect: {
        const HttpStatus before = c.status();
        if (before == HttpStatus::kConnected) {
          phase_ = Phase::kSend;
          continue;
        }
        if (before != HttpStatus::kResolving && before != HttpStatus::kConnecting) {
          const auto result = before == HttpStatus::kCantResolve ? RequestResult::kCantResolve
                              : before == HttpStatus::kTlsHandshakeError
                                  ? RequestResult::kTlsHandshakeError
                                  : RequestResult::kCantConnect;
          return finish(result, c.error());
        }
        c.poll();
        if (c.status() == before) return Step::kYield;
        continue;
      }
      case Phase::kSend:
        if (!c.request(spec_.method, target_, {}, spec_.body)) {
          return finish(RequestResult::kConnectionError, "request() refused");
        }
        phase_ = Phase::kRequesting;
        continue;
      case Phase::kRequesting: {
        c.poll();
        const HttpStatus s = c.status();
        if (s == HttpStatus::kRequesting) return Step::kYield;
        completion_.http_status = c.response_code();
        if (s == HttpStatus::kConnected) return finish(RequestResult::kSuccess);  // no body
        if (s != HttpStatus::kBody) return finish(RequestResult::kConnectionError, c.error());
        if (!spec_.download_file.empty()) {
          file_ = rt_.sinks ? rt_.sinks->open(spec_.download_file) : nullptr;
          if (!file_) return finish(RequestResult::kDownloadFileCantOpen, spec_.download_file);
        }
        phase_ = Phase::kBody;
        continue;
      }
      case Phase::kBody: {
        c.poll();
        // Drain: every chunk that is available now, until a read comes back empty.
        while (c.status() == HttpStatus::kBody) {
          const std::vector<std::byte> chunk = c.read_response_body_chunk();
          if (chunk.empty()) break;
          completion_.body_bytes += chunk.size();
          if (file_ && !file_->write(chunk)) {
            return finish(RequestResult::kDownloadFileWriteError, spec_.download_file);
          }
        }
        const HttpStatus s = c.status();
        if (s == HttpStatus::kBody) return Step::kYield;
        if (s == HttpStatus::kConnected || s == HttpStatus::kDisconnected) {
          const auto expected = c.response_body_length();
          if (expected >= 0 && completion_.body_bytes != static_cast<std::uint64_t>(expected)) {
            return finish(RequestResult::kChunkedBodySizeMismatch, "body ended early");
          }
          return finish(RequestResult::kSuccess);
        }
        return finish(RequestResult::kConnectionError, c.error());
      }
    }
  }
  return finish(RequestResult::kConnectionError, "request loop did not settle");
}

C3HttpModel::Step C3HttpModel::finish(RequestResult result, std::string error) {
  completion_.result = result;
  completion_.error = std::move(error);
  if (file_ && !file_->finish() && result == RequestResult::kSuccess) {
    completion_.result = RequestResult::kDownloadFileWriteError;
  }
  file_.reset();
  return Step::kDone;
}

void C3HttpModel::complete() {
  if (client_) {
    if (options_.session) {
      options_.session->release(key_, std::move(client_));
    }
    client_.reset();
  }
  auto done = std::move(done_);
  done_ = nullptr;
  if (done) done(completion_);
}

void C3HttpModel::cancel() {
  ++request_serial_;
  if (worker_) {
    quit_ = true;
    worker_->join();
    worker_.reset();
  }
  if (client_ && options_.session) options_.session->release(key_, nullptr);
  client_.reset();
  file_.reset();
}

}  // namespace tb
