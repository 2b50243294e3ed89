#include "twinbench/clientcore/http_request_model.hpp"

#include "twinbench/clientcore/url.hpp"

namespace tb {

const char* to_string(RequestResult r) {
  switch (r) {
    case RequestResult::kSuccess:
      return "success";
    case RequestResult::kChunkedBodySizeMismatch:
      return "chunked_body_size_mismatch";
    case RequestResult::kCantConnect:
      return "cant_connect";
    case RequestResult::kCantResolve:
      return "cant_resolve";
    case RequestResult::kConnectionError:
      return "connection_error";
    case RequestResult::kTlsHandshakeError:
      return "tls_handshake_error";
    case RequestResult::kNoResponse:
      return "no_response";
    case RequestResult::kBodySizeLimitExceeded:
      return "body_size_limit_exceeded";
    case RequestResult::kRequestFailed:
      return "request_failed";
    case RequestResult::kDownloadFileCantOpen:
      return "download_file_cant_open";
    case RequestResult::kDownloadFileWriteError:
      return "download_file_write_error";
    case RequestResult::kCancelled:
      return "cancelled";
  }
  return "?";
}

HttpRequestModel::HttpRequestModel(ModelRuntime runtime, HttpRequestOptions options)
    : rt_(runtime), options_(options) {}

HttpRequestModel::~HttpRequestModel() { cancel(); }

void HttpRequestModel::request(const RequestSpec& spec, Callback done) {
  cancel();
  spec_ = spec;
  done_ = std::move(done);
  request_sent_ = got_response_ = false;
  body_len_ = -1;
  downloaded_ = 0;
  completion_ = Completion{};
  file_.reset();
  const auto url = parse_url(spec.url);
  HttpClientOptions client_options;
  client_options.read_chunk_size = options_.download_chunk_size;
  client_options.send_on_request = options_.profile == EngineProfile::kGodot3;
  client_ = std::make_unique<HttpClient>(rt_.transports, rt_.resolver, client_options);
  if (!url || (url->tls() && !options_.tls)) {
    const auto serial = request_serial_;
    const std::string why = url ? "https URL without a TLS configuration: " : "unsupported URL: ";
    rt_.frames.call_deferred([this, serial, why] {
      if (serial == request_serial_) {
        completion_.result = RequestResult::kRequestFailed;
        completion_.error = why + spec_.url;
        request_done(completion_);
      }
    });
    return;
  }
  host_ = url->host;
  port_ = url->port;
  target_ = url->target;
  tls_ = url->tls() ? options_.tls : nullptr;
  if (options_.use_threads) {
    worker_started_connection_ = false;
    quit_ = false;
    worker_ = rt_.threads.start(
        [this] {
          if (!worker_started_connection_) {  // _thread_func calls _request() first
            worker_started_connection_ = true;
            start_connection();
            return false;
          }
          return update_connection();
        },
        options_.worker_sleep);
  } else {
    start_connection();
    process_ = rt_.frames.add_internal_process([this] {
      if (update_connection()) {  // set_process_internal(false)
        rt_.frames.remove_internal_process(process_);
        process_ = 0;
      }
    });
  }
}

void HttpRequestModel::start_connection() { client_->connect_to_host(host_, port_, tls_); }

void HttpRequestModel::cancel() {
  ++request_serial_;
  if (process_) rt_.frames.remove_internal_process(process_);
  process_ = 0;
  if (worker_) {  // thread_request_quit, then wait_to_finish()
    quit_ = true;
    worker_->join();
    worker_.reset();
  }
  client_.reset();
  file_.reset();
}

bool HttpRequestModel::finish(RequestResult result, std::string error) {
  completion_.result = result;
  completion_.error = std::move(error);
  completion_.body_bytes = downloaded_;
  if (client_) completion_.http_status = client_->response_code();
  if (file_ && !file_->finish() && result == RequestResult::kSuccess) {
    completion_.result = RequestResult::kDownloadFileWriteError;
  }
  file_.reset();
  const auto serial = request_serial_;
  const Completion completion = completion_;
  rt_.frames.call_deferred([this, serial, completion] {
    if (serial == request_serial_) request_done(completion);
  });
  return true;
}

void HttpRequestModel::request_done(const Completion& completion) {
  // _request_done: cancel_request() joins the worker, then request_completed is emitted.
  if (worker_) {
    worker_->join();
    worker_.reset();
  }
  client_.reset();
  auto done = std::move(done_);
  done_ = nullptr;
  if (done) done(completion);
}

bool HttpRequestModel::update_connection() {
  if (quit_) return true;  // cancelled
  HttpClient& c = *client_;
  switch (c.status()) {
    case HttpStatus::kDisconnected:
      return finish(RequestResult::kCantConnect, "disconnected");
    case HttpStatus::kResolving:
    case HttpStatus::kConnecting:
      c.poll();
      return false;  // must wait
    case HttpStatus::kCantResolve:
      return finish(RequestResult::kCantResolve, c.error());
    case HttpStatus::kCantConnect:
      return finish(RequestResult::kCantConnect, c.error());
    case HttpStatus::kConnectionError:
      return finish(RequestResult::kConnectionError, c.error());
    case HttpStatus::kTlsHandshakeError:
      return finish(RequestResult::kTlsHandshakeError, c.error());
    case HttpStatus::kConnected:
      if (request_sent_) {
        if (!got_response_) return finish(RequestResult::kSuccess);  // response without body
        if (body_len_ < 0) return finish(RequestResult::kSuccess);   // chunked body done
        return finish(RequestResult::kChunkedBodySizeMismatch, "body ended early");
      }
      if (!c.request(spec_.method, target_, {}, spec_.body)) {
        return finish(RequestResult::kConnectionError, "request() refused");
      }
      request_sent_ = true;
      return false;  // the request goes out on the next poll, next frame
    case HttpStatus::kRequesting:
      c.poll();
      return false;  // even when this poll reached BODY: the status is read next frame
    case HttpStatus::kBody: {
      if (!got_response_) {  // _handle_response
        got_response_ = true;
        if (!c.is_response_chunked() && c.response_body_length() == 0) {
          return finish(RequestResult::kSuccess);
        }
        body_len_ = c.response_body_length();
        if (!spec_.download_file.empty()) {
          file_ = rt_.sinks ? rt_.sinks->open(spec_.download_file) : nullptr;
          if (!file_) return finish(RequestResult::kDownloadFileCantOpen, spec_.download_file);
        }
      }
      c.poll();
      // Godot 4 re-checks the status here; 3.2 reads a chunk regardless.
      if (options_.profile == EngineProfile::kGodot4 && c.status() != HttpStatus::kBody)
        return false;
      const std::vector<std::byte> chunk = c.read_response_body_chunk();
      downloaded_ += chunk.size();
      if (file_ && !chunk.empty() && !file_->write(chunk)) {
        return finish(RequestResult::kDownloadFileWriteError, spec_.download_file);
      }
      if (body_len_ >= 0) {
        if (static_cast<std::int64_t>(downloaded_) == body_len_)
          return finish(RequestResult::kSuccess);
      } else if (c.status() == HttpStatus::kDisconnected) {
        return finish(RequestResult::kSuccess);  // read until EOF, with no errors
      }
      return false;
    }
  }
  return false;
}

}  // namespace tb
