// An RSA private key whose operations skip blinding, for simulated servers only. Blinding
// defends a real server against timing attacks; a simulation has no such observer, and setting
// the blinding up costs as much as half of a 2048-bit signature, once per server context (each
// simulation's own). OpenSSL 3.0 offers no switch for a provider's key: the key is copied into a
// legacy RSA object with its own copy of the default method, which keeps it on the legacy code
// path where RSA_FLAG_NO_BLINDING is honoured. The APIs are deprecated, hence the suppression,
// confined to this file.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "twinbench/servercore/unblinded_key.hpp"

#include <openssl/evp.h>
#include <openssl/rsa.h>

namespace tb::servercore {
namespace {

// One per process: a copy of the default method makes the key "foreign" to the providers.
const RSA_METHOD* legacy_method() {
  static RSA_METHOD* method = RSA_meth_dup(RSA_PKCS1_OpenSSL());
  return method;
}

}  // namespace

EVP_PKEY* unblinded_copy(EVP_PKEY* key) {
  if (key == nullptr || legacy_method() == nullptr) return nullptr;
  if (EVP_PKEY_get_base_id(key) != EVP_PKEY_RSA) return EVP_PKEY_dup(key);
  const RSA* cached = EVP_PKEY_get0_RSA(key);  // the key's legacy view, owned by it
  RSA* rsa = cached ? RSAPrivateKey_dup(cached) : nullptr;
  EVP_PKEY* copy = rsa ? EVP_PKEY_new() : nullptr;
  if (copy == nullptr || RSA_set_method(rsa, legacy_method()) != 1 ||
      EVP_PKEY_assign_RSA(copy, rsa) != 1) {
    EVP_PKEY_free(copy);
    RSA_free(rsa);
    return nullptr;
  }
  RSA_blinding_off(rsa);  // owned by `copy` now
  return copy;
}

}  // namespace tb::servercore
