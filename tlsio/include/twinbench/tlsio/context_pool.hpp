#pragma once
// OpenSSL contexts (SSL_CTX) kept for reuse by the next client or server with the same settings.
// A simulation makes a TLS server and a client context per run, and OpenSSL 3.0's SSL_CTX_new
// alone fetches every cipher, digest, group and signature algorithm from its providers: the two
// cost ~3 % of a simulated 1 MiB HTTPS download's CPU time.
//
// A context taken again is as a new one would be. What SSL_CTX_new draws from the random
// generator (RFC 5077 ticket keys, then the stateless-cookie key: 16, 32, 32 and 32 bytes) is drawn
// again in the same sizes and order and the ticket keys set from it, so that a deterministic
// generator (servercore's DeterministicRandom) gives the connections that follow the same bytes
// as after a new context; the cookie key, used only by SSL_stateless, keeps its first value. The
// sessions a context cached are flushed when it is given back. Its session statistics are not
// reset: OpenSSL also flushes expired sessions (by wall-clock time) at every 255th handshake a
// server context counts, which can then come at another handshake than with a new context; but
// sessions live two hours (OpenSSL's default) and go when their owner gives the context back, so
// no owner that runs for less than that sees the difference. Settings are not reapplied: the key
// must name everything its owner configured, and an owner whose context keeps other state between
// uses (a server key with RSA blinding caches a factor it drew) must not pool it. An owner gives
// its context back only when no connection made from it (SSL_new) is left.
#include <openssl/types.h>  // SSL_CTX

#include <string>
#include <utility>

struct ssl_method_st;  // SSL_METHOD (openssl/ssl.h)

namespace tb::tlsio {

class PooledContext {
 public:
  PooledContext() = default;
  PooledContext(PooledContext&& other) noexcept;
  PooledContext& operator=(PooledContext&& other) noexcept;
  ~PooledContext();  // gives a configured context back to the pool; frees an unconfigured one

  SSL_CTX* get() const { return ctx_; }
  // True when the context was just made: the owner configures it, then calls configured().
  bool fresh() const { return !configured_; }
  void configured() { configured_ = true; }

 private:
  friend PooledContext take_context(const std::string& key, const ssl_method_st* method);
  PooledContext(std::string key, SSL_CTX* ctx, bool configured)
      : key_(std::move(key)), ctx_(ctx), configured_(configured) {}

  std::string key_;
  SSL_CTX* ctx_ = nullptr;
  bool configured_ = false;
};

// An idle context made for `key`, refreshed as above, or a new one of `method`; with an empty key
// always a new one, freed rather than given back. Thread-safe. Throws std::bad_alloc when OpenSSL
// cannot make a context.
PooledContext take_context(const std::string& key, const ssl_method_st* method);

}  // namespace tb::tlsio
