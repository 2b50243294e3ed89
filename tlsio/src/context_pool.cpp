#include "twinbench/tlsio/context_pool.hpp"

#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <array>
#include <map>
#include <mutex>
#include <new>
#include <utility>

namespace tb::tlsio {

namespace {

std::mutex g_mutex;
// Idle contexts by key. Never destroyed: they live as long as the process (and its forks).
std::multimap<std::string, SSL_CTX*>& idle() {
  static auto* const contexts = new std::multimap<std::string, SSL_CTX*>;
  return *contexts;
}

// Draws what SSL_CTX_new draws (OpenSSL 3.0, ssl/ssl_lib.c), in its sizes and order, and sets the
// ticket keys from it. False if the generator failed, as SSL_CTX_new would then have failed too.
bool redraw_random_state(SSL_CTX* ctx) {
  std::array<unsigned char, 16 + 32 + 32> ticket_keys{};  // name, HMAC key, AES key
  std::array<unsigned char, 32> cookie_key{};
  const bool drawn = RAND_bytes(ticket_keys.data(), 16) == 1 &&
                     RAND_priv_bytes(ticket_keys.data() + 16, 32) == 1 &&
                     RAND_priv_bytes(ticket_keys.data() + 48, 32) == 1 &&
                     RAND_priv_bytes(cookie_key.data(), 32) == 1;
  return drawn && SSL_CTX_set_tlsext_ticket_keys(ctx, ticket_keys.data(),
                                                 static_cast<long>(ticket_keys.size())) == 1;
}

}  // namespace

PooledContext take_context(const std::string& key, const ssl_method_st* method) {
  SSL_CTX* ctx = nullptr;
  if (!key.empty()) {
    const std::lock_guard lock(g_mutex);
    if (auto it = idle().find(key); it != idle().end()) {
      ctx = it->second;
      idle().erase(it);
    }
  }
  if (ctx && redraw_random_state(ctx)) return PooledContext(key, ctx, true);
  SSL_CTX_free(ctx);
  ctx = SSL_CTX_new(method);
  if (!ctx) throw std::bad_alloc();
  return PooledContext(key, ctx, false);
}

PooledContext::PooledContext(PooledContext&& other) noexcept
    : key_(std::move(other.key_)),
      ctx_(std::exchange(other.ctx_, nullptr)),
      configured_(other.configured_) {}

PooledContext& PooledContext::operator=(PooledContext&& other) noexcept {
  if (this != &other) {
    PooledContext old(std::move(*this));
    key_ = std::move(other.key_);
    ctx_ = std::exchange(other.ctx_, nullptr);
    configured_ = other.configured_;
  }
  return *this;
}

PooledContext::~PooledContext() {
  if (!ctx_) return;
  if (!configured_ || key_.empty()) {
    SSL_CTX_free(ctx_);
    return;
  }
  SSL_CTX_flush_sessions(ctx_, 0);  // 0: every session, whatever its age
  const std::lock_guard lock(g_mutex);
  idle().emplace(std::move(key_), ctx_);
}

}  // namespace tb::tlsio
