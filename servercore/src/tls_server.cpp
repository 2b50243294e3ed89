#include "twinbench/servercore/tls_server.hpp"

#include "twinbench/tlsio/queue_bio.hpp"

#include "twinbench/servercore/unblinded_key.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tb::servercore {
namespace {

constexpr unsigned char kAlpnHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};

int protocol(TlsVersion v) { return v == TlsVersion::k1_2 ? TLS1_2_VERSION : TLS1_3_VERSION; }

std::string openssl_error(const char* what) {
  std::string text = what;
  while (const unsigned long e = ERR_get_error()) {
    std::array<char, 256> buf{};
    ERR_error_string_n(e, buf.data(), buf.size());
    text += std::string(": ") + buf.data();
  }
  return text;
}

int select_alpn(SSL*, const unsigned char** out, unsigned char* out_len, const unsigned char* in,
                unsigned int in_len, void*) {
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, out_len, kAlpnHttp11, sizeof kAlpnHttp11, in, in_len) !=
      OPENSSL_NPN_NEGOTIATED)
    return SSL_TLSEXT_ERR_ALERT_FATAL;  // a client that offers ALPN but not http/1.1
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

// A certificate chain and key as read from their PEM text. OpenSSL 3 reads a private key through
// its decoder framework, ~0.5 ms each time: with a simulation per HTTPS download that was a large
// part of a small one's cost, so each text is read once per process. X509 and EVP_PKEY objects are
// safe to share read-only.
struct DecodedCredentials {
  X509* leaf = nullptr;
  std::vector<X509*> intermediates;
  EVP_PKEY* key = nullptr;

  DecodedCredentials(const std::string& chain_pem, const std::string& key_pem) {
    BIO* chain = BIO_new_mem_buf(chain_pem.data(), static_cast<int>(chain_pem.size()));
    leaf = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
    while (leaf) {
      X509* ca = PEM_read_bio_X509(chain, nullptr, nullptr, nullptr);
      if (!ca) break;
      intermediates.push_back(ca);
    }
    BIO_free(chain);
    ERR_clear_error();  // the end of the PEM list
    BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
    key = PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr);
    BIO_free(key_bio);
  }
  ~DecodedCredentials() {
    X509_free(leaf);
    for (X509* ca : intermediates) X509_free(ca);
    EVP_PKEY_free(key);
  }
  DecodedCredentials(const DecodedCredentials&) = delete;
  DecodedCredentials& operator=(const DecodedCredentials&) = delete;
};

// Read once per process when both parts read (a few test credentials); read each time otherwise,
// so that OpenSSL's error queue says why.
std::shared_ptr<const DecodedCredentials> decode(const std::string& chain_pem,
                                                 const std::string& key_pem) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, std::string>, std::shared_ptr<const DecodedCredentials>>
      decoded;
  const std::lock_guard lock(mutex);
  auto it = decoded.find({chain_pem, key_pem});
  if (it != decoded.end()) return it->second;
  auto d = std::make_shared<const DecodedCredentials>(chain_pem, key_pem);
  if (d->leaf && d->key) decoded.emplace(std::make_pair(chain_pem, key_pem), d);
  return d;
}

// What a context is configured from, as the key of contexts kept for reuse; none (a new context
// each time) for a blinded key, whose cached blinding factor would carry over.
std::string pool_key(const TlsServerConfig& c) {
  if (c.rsa_blinding) return {};
  return "server|" + std::to_string(static_cast<int>(c.min_version)) + "|" +
         std::to_string(static_cast<int>(c.max_version)) + "|" + std::to_string(c.resumption) +
         "|" + (c.tickets ? std::to_string(*c.tickets) : "-") + "|" + c.chain_pem + "|" + c.key_pem;
}

}  // namespace

TlsServerContext::TlsServerContext(const TlsServerConfig& config)
    : ctx_(tlsio::take_context(pool_key(config), TLS_server_method())) {
  if (!ctx_.fresh()) return;  // configured by an earlier server with the same settings
  SSL_CTX* const ctx = ctx_.get();
  ERR_clear_error();
  auto fail = [&](const char* what) { throw std::runtime_error(openssl_error(what)); };
  SSL_CTX_set_min_proto_version(ctx, protocol(config.min_version));
  SSL_CTX_set_max_proto_version(ctx, protocol(config.max_version));
  // X25519 first: fixed-size key shares keep handshake sizes the same run to run.
  if (SSL_CTX_set1_groups_list(ctx, "X25519:P-256") != 1) fail("TLS groups");
  const auto decoded = decode(config.chain_pem, config.key_pem);
  const bool leaf_ok = decoded->leaf && SSL_CTX_use_certificate(ctx, decoded->leaf) == 1;
  for (X509* ca : decoded->intermediates) {
    if (!leaf_ok) break;
    X509_up_ref(ca);
    SSL_CTX_add_extra_chain_cert(ctx, ca);  // takes ownership of the reference
  }
  if (!leaf_ok) fail("TLS server certificate");
  // A copy of the decoded key for this context alone: what its first private-key operation
  // caches (RSA blinding, which draws random bytes) stays with it, as with a freshly read key.
  EVP_PKEY* key = !decoded->key         ? nullptr
                  : config.rsa_blinding ? EVP_PKEY_dup(decoded->key)
                                        : unblinded_copy(decoded->key);
  const bool key_ok =
      key && SSL_CTX_use_PrivateKey(ctx, key) == 1 && SSL_CTX_check_private_key(ctx) == 1;
  EVP_PKEY_free(key);
  if (!key_ok) fail("TLS server key");
  SSL_CTX_set_alpn_select_cb(ctx, select_alpn, nullptr);
  const std::uint32_t tickets = config.tickets.value_or(config.resumption ? 1 : 0);
  SSL_CTX_set_num_tickets(ctx, tickets);  // OpenSSL's default is 2
  if (tickets == 0) SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
  if (!config.resumption) SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
  ctx_.configured();
}

TlsServerContext::~TlsServerContext() = default;

struct TlsServerConnection::Impl {
  std::shared_ptr<const TlsServerContext> context;
  ServerConnection inner;
  tlsio::ByteQueue in;       // ciphertext received, read by OpenSSL
  tlsio::ByteQueue out;      // ciphertext OpenSSL produced, not yet handed out
  tlsio::ByteQueue pending;  // the current write (valid until write_done)
  SSL* ssl;                  // its BIOs are over `in` and `out`
  bool failed = false;
  bool received = false;  // any ciphertext yet
  bool peer_closed = false;
  bool shutdown_sent = false;
  std::string error;

  Impl(std::shared_ptr<const TlsServerContext> ctx, ServerConfig config)
      : context(std::move(ctx)), inner(config), ssl(SSL_new(context->native())) {
    if (!ssl) throw std::runtime_error("TLS server connection: out of memory");
    SSL_set_bio(ssl, tlsio::make_queue_bio(in), tlsio::make_queue_bio(out));
    SSL_set_accept_state(ssl);
  }
  ~Impl() { SSL_free(ssl); }

  void fail(const char* what) {
    failed = true;
    error = openssl_error(what);
  }

  bool established() const { return SSL_is_init_finished(ssl) == 1; }

  void receive(std::span<const std::byte> data) {
    if (failed) return;
    received = received || !data.empty();
    in.append(data);
    if (!established()) {
      ERR_clear_error();
      const int r = SSL_do_handshake(ssl);
      if (r != 1) {
        const int e = SSL_get_error(ssl, r);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) fail("TLS handshake");
        return;
      }
    }
    // The request may have arrived together with the client's Finished.
    std::array<std::byte, 16 * 1024> plain;
    for (;;) {
      ERR_clear_error();
      const int n = SSL_read(ssl, plain.data(), static_cast<int>(plain.size()));
      if (n > 0) {
        inner.on_receive(std::span(plain.data(), static_cast<std::size_t>(n)));
        continue;
      }
      const int e = SSL_get_error(ssl, n);
      if (e == SSL_ERROR_ZERO_RETURN)
        inner.on_peer_closed();  // close_notify
      else if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        fail("TLS read");
      return;
    }
  }

  bool closing() const { return failed || (peer_closed && !established()) || inner.should_close(); }

  std::span<const std::byte> next() {
    if (!pending.empty()) return pending.data();
    if (!failed && established()) {
      const auto plain = inner.next_write();
      if (!plain.empty()) {
        ERR_clear_error();
        if (SSL_write(ssl, plain.data(), static_cast<int>(plain.size())) <= 0)
          fail("TLS write");
        else
          inner.write_done();
      } else if (inner.should_close() && !shutdown_sent) {
        shutdown_sent = true;
        SSL_shutdown(ssl);  // close_notify before the TCP close
      }
    }
    // All of OpenSSL's output becomes the write, without a copy; what it writes while this one is
    // out (an answer to a post-handshake message) waits in `out`, so the span stays valid.
    pending.swap(out);
    return pending.data();
  }
};

TlsServerConnection::TlsServerConnection(std::shared_ptr<const TlsServerContext> context,
                                         ServerConfig config)
    : impl_(std::make_unique<Impl>(std::move(context), config)) {}
TlsServerConnection::~TlsServerConnection() = default;

void TlsServerConnection::on_receive(std::span<const std::byte> data) { impl_->receive(data); }

void TlsServerConnection::on_peer_closed() {
  impl_->peer_closed = true;
  impl_->inner.on_peer_closed();
}

std::span<const std::byte> TlsServerConnection::next_write() { return impl_->next(); }
void TlsServerConnection::write_done() { impl_->pending.clear(); }

bool TlsServerConnection::should_close() const {
  const bool flushed = impl_->pending.empty() && impl_->out.empty();
  const bool notified = impl_->failed || !impl_->established() || impl_->shutdown_sent;
  return impl_->closing() && notified && flushed;
}

std::uint64_t TlsServerConnection::requests_served() const {
  return impl_->inner.requests_served();
}
bool TlsServerConnection::handshaking() const { return !impl_->failed && !impl_->established(); }

bool TlsServerConnection::receiving_request_head() const {
  if (impl_->failed) return false;
  if (!impl_->established()) return impl_->received;  // a handshake begun and not finished
  // SSL_has_pending: part of a record is buffered (a record trickled in counts as a head).
  return impl_->inner.receiving_request_head() || SSL_has_pending(impl_->ssl) == 1 ||
         !impl_->in.empty();
}

void TlsServerConnection::on_head_timeout() {
  if (impl_->failed) return;
  if (!impl_->established()) {
    impl_->failed = true;  // nothing can be said to a peer without keys: just close
    impl_->error = "TLS handshake timed out";
    return;
  }
  impl_->inner.on_head_timeout();
}
const std::string& TlsServerConnection::error() const { return impl_->error; }

std::unique_ptr<Connection> make_connection(const ServerConfig& config,
                                            const std::shared_ptr<const TlsServerContext>& tls) {
  if (tls) return std::make_unique<TlsServerConnection>(tls, config);
  return std::make_unique<ServerConnection>(config);
}

}  // namespace tb::servercore
