// The unblinded key copy of simulated servers: it signs what the original key verifies (PKCS#1
// v1.5, as TLS 1.2 may, and PSS, as TLS 1.3 does), with blinding off; other key types are copied.
#define OPENSSL_SUPPRESS_DEPRECATED  // RSA_test_flags: the flag the copy is for
#include "twinbench/servercore/unblinded_key.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <vector>

#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace tb::servercore {
namespace {

using Key = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

Key read_key(KeyType type) {
  CertProfile profile;
  profile.key_type = type;
  const std::string pem = make_credentials(profile).key_pem;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Key key(PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr), &EVP_PKEY_free);
  BIO_free(bio);
  return key;
}

// Signs `message` with `signer` (RSA with `padding`, or the key type's own scheme when 0) and
// verifies the signature with `verifier`.
bool signs_for(EVP_PKEY* signer, EVP_PKEY* verifier, int padding) {
  const std::string message = "twinbench handshake transcript";
  const EVP_MD* md =
      padding == 0 && EVP_PKEY_get_base_id(signer) == EVP_PKEY_ED25519 ? nullptr : EVP_sha256();
  std::vector<unsigned char> signature(EVP_PKEY_get_size(signer));
  std::size_t length = signature.size();
  EVP_MD_CTX* sign = EVP_MD_CTX_new();
  EVP_PKEY_CTX* sign_key = nullptr;
  bool ok =
      EVP_DigestSignInit(sign, &sign_key, md, nullptr, signer) == 1 &&
      (padding == 0 || EVP_PKEY_CTX_set_rsa_padding(sign_key, padding) == 1) &&
      EVP_DigestSign(sign, signature.data(), &length,
                     reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(sign);
  EVP_MD_CTX* verify = EVP_MD_CTX_new();
  EVP_PKEY_CTX* verify_key = nullptr;
  ok =
      ok && EVP_DigestVerifyInit(verify, &verify_key, md, nullptr, verifier) == 1 &&
      (padding == 0 || EVP_PKEY_CTX_set_rsa_padding(verify_key, padding) == 1) &&
      EVP_DigestVerify(verify, signature.data(), length,
                       reinterpret_cast<const unsigned char*>(message.data()), message.size()) == 1;
  EVP_MD_CTX_free(verify);
  return ok;
}

TEST(UnblindedKey, AnRsaCopySignsWhatTheOriginalVerifiesWithBlindingOff) {
  const Key original = read_key(KeyType::kRsa2048);
  ASSERT_TRUE(original);
  const Key copy(unblinded_copy(original.get()), &EVP_PKEY_free);
  ASSERT_TRUE(copy);
  EXPECT_EQ(EVP_PKEY_eq(original.get(), copy.get()), 1) << "the same key";
  EXPECT_TRUE(RSA_test_flags(EVP_PKEY_get0_RSA(copy.get()), RSA_FLAG_NO_BLINDING));
  EXPECT_FALSE(RSA_test_flags(EVP_PKEY_get0_RSA(original.get()), RSA_FLAG_NO_BLINDING));
  for (const int padding : {RSA_PKCS1_PADDING, RSA_PKCS1_PSS_PADDING}) {
    EXPECT_TRUE(signs_for(copy.get(), original.get(), padding)) << padding;
    EXPECT_TRUE(signs_for(original.get(), copy.get(), padding)) << padding;
  }
}

TEST(UnblindedKey, OtherKeyTypesAreCopiedAsTheyAre) {
  for (const KeyType type : {KeyType::kEcdsaP256, KeyType::kEd25519}) {
    SCOPED_TRACE(to_string(type));
    const Key original = read_key(type);
    ASSERT_TRUE(original);
    const Key copy(unblinded_copy(original.get()), &EVP_PKEY_free);
    ASSERT_TRUE(copy);
    EXPECT_NE(copy.get(), original.get());
    EXPECT_EQ(EVP_PKEY_eq(original.get(), copy.get()), 1);
    EXPECT_TRUE(signs_for(copy.get(), original.get(), 0));
  }
}

TEST(UnblindedKey, NoKeyGivesNoCopy) { EXPECT_EQ(unblinded_copy(nullptr), nullptr); }

TEST(UnblindedKey, OnlyAServerContextWithBlindingOffUsesIt) {
  const Credentials credentials = make_credentials(CertProfile{});  // RSA-2048
  TlsServerConfig config;
  config.chain_pem = credentials.chain_pem;
  config.key_pem = credentials.key_pem;
  const TlsServerContext observable(config);
  config.rsa_blinding = false;
  const TlsServerContext simulated(config);
  auto blinded = [](const TlsServerContext& context) {
    const EVP_PKEY* key = SSL_CTX_get0_privatekey(context.native());
    return key != nullptr && !RSA_test_flags(EVP_PKEY_get0_RSA(key), RSA_FLAG_NO_BLINDING);
  };
  EXPECT_TRUE(blinded(observable));
  EXPECT_FALSE(blinded(simulated));
}

}  // namespace
}  // namespace tb::servercore
