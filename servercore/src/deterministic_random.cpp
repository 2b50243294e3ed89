// OpenSSL 3.0 still honours a legacy RAND_METHOD for every library context (RAND_bytes_ex and
// RAND_priv_bytes_ex consult it first), which is the one hook that reaches the providers' key
// generation and nonces too. It is deprecated, hence the suppression, confined to this file.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "twinbench/servercore/deterministic_random.hpp"

#include <openssl/rand.h>

#include <mutex>
#include <random>

namespace tb::servercore {

struct DeterministicRandom::State {
  std::mt19937_64 stream;
  State* outer = nullptr;
};

namespace {

std::mutex g_mutex;
DeterministicRandom::State* g_current = nullptr;  // the innermost live instance

int fill(unsigned char* out, int n) {
  std::lock_guard lock(g_mutex);
  for (int i = 0; i < n; i += 8) {
    std::uint64_t v = g_current->stream();
    for (int j = 0; j < 8 && i + j < n; ++j, v >>= 8) out[i + j] = static_cast<unsigned char>(v);
  }
  return 1;
}
int seed(const void*, int) { return 1; }
int add(const void*, int, double) { return 1; }
int status() { return 1; }

const RAND_METHOD kMethod = {seed, fill, nullptr, add, fill, status};

}  // namespace

DeterministicRandom::DeterministicRandom(std::uint64_t seed_value)
    : state_(std::make_unique<State>()) {
  std::lock_guard lock(g_mutex);
  state_->stream.seed(seed_value);
  state_->outer = g_current;
  g_current = state_.get();
  RAND_set_rand_method(&kMethod);
}

DeterministicRandom::~DeterministicRandom() {
  std::lock_guard lock(g_mutex);
  g_current = state_->outer;
  if (!g_current) RAND_set_rand_method(nullptr);  // back to the default DRBG
}

}  // namespace tb::servercore
