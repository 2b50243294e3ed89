#include "twinbench/clientcore/tls_client.hpp"

#include "twinbench/tlsio/queue_bio.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinbench/clientcore/resolver.hpp"

namespace tb {
namespace {

constexpr unsigned char kAlpnHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
// Ciphertext taken from the inner transport per read: one full TLS record and its overhead.
constexpr std::size_t kCipherSlice = 16 * 1024 + 512;

int protocol(TlsVersion v) { return v == TlsVersion::k1_2 ? TLS1_2_VERSION : TLS1_3_VERSION; }

// OpenSSL's queued errors, most specific last, e.g. "certificate verify failed (Hostname
// mismatch)".
std::string openssl_reason(SSL* ssl) {
  std::string text;
  while (const unsigned long e = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(e);
    text += std::string(text.empty() ? "" : "; ") + (reason ? reason : "unknown error");
  }
  const long verify = ssl ? SSL_get_verify_result(ssl) : X509_V_OK;
  if (verify != X509_V_OK) text += std::string(" (") + X509_verify_cert_error_string(verify) + ")";
  return text.empty() ? "unknown error" : text;
}

// OpenSSL hands every new session (TLS 1.2 at the end of the handshake, TLS 1.3 per ticket) here.
int on_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* context = static_cast<TlsClientContext*>(SSL_CTX_get_app_data(SSL_get_SSL_CTX(ssl)));
  const auto* key = static_cast<const std::string*>(SSL_get_app_data(ssl));
  if (!context->config().resumption || !key) return 0;
  context->save_session(*key, session);
  return 1;  // we keep the reference
}

// The certificates of a trusted-CA PEM text, read once per process: a simulation makes a client
// context per run, and reading the PEM each time was ~1 % of a simulated 1 MiB HTTPS download.
// X509 objects are safe to share read-only; each store takes its own reference.
class TrustedCertificates {
 public:
  explicit TrustedCertificates(const std::string& pem) {
    BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) certs_.push_back(cert);
    BIO_free(bio);
    ERR_clear_error();  // the end of the PEM list
  }
  ~TrustedCertificates() {
    for (X509* cert : certs_) X509_free(cert);
  }
  TrustedCertificates(const TrustedCertificates&) = delete;
  TrustedCertificates& operator=(const TrustedCertificates&) = delete;
  const std::vector<X509*>& certs() const { return certs_; }

 private:
  std::vector<X509*> certs_;
};

const TrustedCertificates& trusted_certificates(const std::string& pem) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<const TrustedCertificates>> read;
  const std::lock_guard lock(mutex);
  auto& certs = read[pem];
  if (!certs) certs = std::make_unique<const TrustedCertificates>(pem);
  return *certs;
}

// What a context is configured from, as the key of contexts kept for reuse.
std::string pool_key(const TlsClientConfig& c) {
  return "client|" + std::to_string(static_cast<int>(c.min_version)) + "|" +
         std::to_string(static_cast<int>(c.max_version)) + "|" + std::to_string(c.resumption) +
         "|" + c.trusted_ca_pem;
}

}  // namespace

TlsClientContext::TlsClientContext(const TlsClientConfig& config)
    : config_(config), ctx_(tlsio::take_context(pool_key(config), TLS_client_method())) {
  SSL_CTX* const ctx = ctx_.get();
  SSL_CTX_set_app_data(ctx, this);  // where on_new_session saves to, for a reused context too
  if (!ctx_.fresh()) return;        // configured by an earlier client with the same settings
  ERR_clear_error();
  SSL_CTX_set_min_proto_version(ctx, protocol(config.min_version));
  SSL_CTX_set_max_proto_version(ctx, protocol(config.max_version));
  // X25519 first: fixed-size key shares keep handshake sizes the same run to run.
  SSL_CTX_set1_groups_list(ctx, "X25519:P-256");
  SSL_CTX_set_alpn_protos(ctx, kAlpnHttp11, sizeof kAlpnHttp11);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);  // Godot verifies chain and host by default
  // Sessions are kept by this object, not in the context: none pass to the context's next owner.
  SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx, on_new_session);
  if (config.trusted_ca_pem.empty()) {
    SSL_CTX_set_default_verify_paths(ctx);
  } else {
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    int loaded = 0;
    for (X509* cert : trusted_certificates(config.trusted_ca_pem).certs())
      loaded += X509_STORE_add_cert(store, cert);
    ERR_clear_error();
    if (loaded == 0)
      throw std::runtime_error("TLS client context: no certificate in the trusted CA PEM");
  }
  ctx_.configured();
}

TlsClientContext::~TlsClientContext() {
  for (auto& [key, session] : sessions_) SSL_SESSION_free(session);
}

ssl_session_st* TlsClientContext::saved_session(const std::string& key) const {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  SSL_SESSION_up_ref(it->second);
  return it->second;
}

void TlsClientContext::save_session(const std::string& key, ssl_session_st* session) {
  std::lock_guard lock(mutex_);
  auto [it, inserted] = sessions_.emplace(key, session);
  if (!inserted) {
    SSL_SESSION_free(it->second);
    it->second = session;
  }
}

TlsClientTransport::TlsClientTransport(std::unique_ptr<Transport> inner,
                                       std::shared_ptr<TlsClientContext> context, std::string host)
    : inner_(std::move(inner)), context_(std::move(context)), host_(std::move(host)) {}

TlsClientTransport::~TlsClientTransport() {
  close();
  SSL_free(ssl_);  // frees both BIOs (the queues they write to and read from go after it)
}

void TlsClientTransport::connect(const Endpoint& to) {
  if (phase_ != Phase::kIdle) return fail_handshake("connect() called twice");
  session_key_ = host_ + ":" + std::to_string(to.port);
  ssl_ = SSL_new(context_->native());
  if (!ssl_) throw std::runtime_error("TLS client: out of memory");
  SSL_set_bio(ssl_, tlsio::make_queue_bio(incoming_), tlsio::make_queue_bio(outgoing_));
  SSL_set_connect_state(ssl_);
  SSL_set_app_data(ssl_, &session_key_);
  if (is_ip_literal(host_)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host_.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl_, host_.c_str());
    SSL_set1_host(ssl_, host_.c_str());
  }
  if (context_->config().resumption) {
    if (SSL_SESSION* saved = context_->saved_session(session_key_)) {
      SSL_set_session(ssl_, saved);
      SSL_SESSION_free(saved);
    }
  }
  phase_ = Phase::kTcp;
  inner_->connect(to);
}

TransportStatus TlsClientTransport::status() {
  switch (phase_) {
    case Phase::kIdle:
      return TransportStatus::kIdle;
    case Phase::kTcp: {
      const auto s = inner_->status();
      if (s == TransportStatus::kConnecting) return s;
      if (s != TransportStatus::kConnected) {
        error_ = inner_->error();
        phase_ = Phase::kClosed;
        return TransportStatus::kError;  // the TCP connect failed: CANT_CONNECT, as in Godot
      }
      phase_ = Phase::kHandshake;
      [[fallthrough]];
    }
    case Phase::kHandshake:
      step_handshake();
      if (phase_ == Phase::kHandshake) return TransportStatus::kConnecting;
      return phase_ == Phase::kOpen ? TransportStatus::kConnected
                                    : TransportStatus::kHandshakeFailed;
    case Phase::kOpen: {
      flush();
      const auto s = inner_->status();
      if (s == TransportStatus::kError) return s;
      // Bytes already taken from the inner stream may still hold plaintext.
      if (SSL_pending(ssl_) > 0 || !incoming_.empty()) return TransportStatus::kConnected;
      return tls_eof_ ? TransportStatus::kClosed : s;
    }
    case Phase::kFailed:
      return TransportStatus::kHandshakeFailed;
    case Phase::kClosed:
      return error_.empty() ? TransportStatus::kClosed : TransportStatus::kError;
  }
  return TransportStatus::kError;
}

void TlsClientTransport::step_handshake() {
  flush();
  while (pull()) {
  }
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  flush();
  if (r == 1) {
    phase_ = Phase::kOpen;
    return;
  }
  const int e = SSL_get_error(ssl_, r);
  if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
    return fail_handshake(openssl_reason(ssl_));
  if (inner_error_)
    return fail_handshake("connection broke during the handshake: " + inner_->error());
  if (inner_eof_) return fail_handshake("the server closed the connection during the handshake");
}

bool TlsClientTransport::pull() {
  if (inner_eof_ || inner_error_) return false;
  // Read straight into the queue OpenSSL reads from: no copy in between.
  const ReadResult r = inner_->read_some(incoming_.prepare(kCipherSlice));
  if (r.kind == ReadResult::Kind::kData) {
    incoming_.commit(r.bytes);
    return true;
  }
  if (r.kind == ReadResult::Kind::kEof) inner_eof_ = true;
  if (r.kind == ReadResult::Kind::kError) inner_error_ = true;
  return false;
}

void TlsClientTransport::flush() {
  if (outgoing_.empty()) return;
  outgoing_.consume(inner_->write_some(outgoing_.data()));
}

void TlsClientTransport::fail_handshake(std::string why) {
  phase_ = Phase::kFailed;
  error_ = "TLS handshake with " + host_ + " failed: " + why;
  inner_->close();
}

std::size_t TlsClientTransport::write_some(std::span<const std::byte> data) {
  if (phase_ != Phase::kOpen || data.empty()) return 0;
  flush();
  if (!outgoing_.empty()) return 0;  // older ciphertext first
  ERR_clear_error();
  const int n =
      SSL_write(ssl_, data.data(), static_cast<int>(std::min<std::size_t>(data.size(), INT_MAX)));
  if (n <= 0) {
    error_ = "TLS write failed: " + openssl_reason(ssl_);
    return 0;
  }
  flush();
  return static_cast<std::size_t>(n);
}

ReadResult TlsClientTransport::read_some(std::span<std::byte> out) {
  if (phase_ == Phase::kFailed) return {ReadResult::Kind::kError, 0};
  if (phase_ == Phase::kClosed)
    return {error_.empty() ? ReadResult::Kind::kEof : ReadResult::Kind::kError, 0};
  if (phase_ != Phase::kOpen || out.empty()) return {ReadResult::Kind::kWouldBlock, 0};
  if (tls_eof_) return {ReadResult::Kind::kEof, 0};
  for (;;) {
    ERR_clear_error();
    const int n =
        SSL_read(ssl_, out.data(), static_cast<int>(std::min<std::size_t>(out.size(), INT_MAX)));
    flush();  // post-handshake messages may need an answer
    if (n > 0) return {ReadResult::Kind::kData, static_cast<std::size_t>(n)};
    const int e = SSL_get_error(ssl_, n);
    if (e == SSL_ERROR_ZERO_RETURN) {
      tls_eof_ = true;
      return {ReadResult::Kind::kEof, 0};
    }
    if (e != SSL_ERROR_WANT_READ) {
      error_ = "TLS read failed: " + openssl_reason(ssl_);
      phase_ = Phase::kClosed;
      return {ReadResult::Kind::kError, 0};
    }
    if (pull()) continue;
    if (inner_error_) {
      error_ = inner_->error();
      return {ReadResult::Kind::kError, 0};
    }
    // A TCP close without close_notify ends the stream too, as most HTTP clients accept.
    return {inner_eof_ ? ReadResult::Kind::kEof : ReadResult::Kind::kWouldBlock, 0};
  }
}

std::size_t TlsClientTransport::available() {
  return phase_ == Phase::kOpen ? static_cast<std::size_t>(SSL_pending(ssl_)) + inner_->available()
                                : 0;
}

void TlsClientTransport::close() {
  if (phase_ == Phase::kOpen) {
    SSL_shutdown(ssl_);  // close_notify; an unclean end would mark the session not resumable
    flush();
  }
  if (phase_ != Phase::kIdle && phase_ != Phase::kFailed) phase_ = Phase::kClosed;
  inner_->close();
}

bool TlsClientTransport::session_reused() const { return ssl_ && SSL_session_reused(ssl_) == 1; }

}  // namespace tb
