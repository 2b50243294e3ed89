#pragma once
// A copy of a private key whose RSA operations skip blinding (servercore/src/unblinded_key.cpp
// says why only simulations use it). Keys of other types are copied as they are. nullptr if the
// copy cannot be made or no key is given.
#include <openssl/types.h>

namespace tb::servercore {

EVP_PKEY* unblinded_copy(EVP_PKEY* key);

}  // namespace tb::servercore
