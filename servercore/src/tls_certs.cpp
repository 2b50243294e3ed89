#include "twinbench/servercore/tls_certs.hpp"

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "twinbench/servercore/deterministic_random.hpp"

namespace tb::servercore {
namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;

void check(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test certificates: ") + what + " failed");
}

Key generate_key(KeyType type) {
  EVP_PKEY* key = nullptr;
  switch (type) {
    case KeyType::kRsa2048:
      key = EVP_RSA_gen(2048);
      break;
    case KeyType::kRsa4096:
      key = EVP_RSA_gen(4096);
      break;
    case KeyType::kEd25519:
      key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519");
      break;
    case KeyType::kEcdsaP256:
      key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
      break;
  }
  check(key != nullptr, "key generation");
  return Key(key);
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  check(ext != nullptr, "certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// Fixed serials and validity (2024-01-01 to 2049-12-31) keep the certificates byte-stable;
// EdDSA signs without a separate digest.
Cert make_cert(const std::string& subject, long serial, EVP_PKEY* key, X509* issuer,
               EVP_PKEY* issuer_key, bool ca, const std::string& alt_names) {
  Cert cert(X509_new());
  X509* c = cert.get();
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
  check(ASN1_TIME_set_string(X509_getm_notBefore(c), "240101000000Z") == 1, "validity");
  check(ASN1_TIME_set_string(X509_getm_notAfter(c), "491231235959Z") == 1, "validity");
  X509_NAME* name = X509_get_subject_name(c);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(subject.c_str()), -1, -1, 0);
  X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(c, key);
  X509* signer = issuer ? issuer : c;
  add_extension(c, signer, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE");
  add_extension(c, signer, NID_key_usage,
                ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature");
  add_extension(c, signer, NID_subject_key_identifier, "hash");
  add_extension(c, signer, NID_authority_key_identifier, "keyid:always");
  if (!ca) {
    add_extension(c, signer, NID_ext_key_usage, "serverAuth");
    add_extension(c, signer, NID_subject_alt_name, alt_names);
  }
  EVP_PKEY* signing_key = issuer_key ? issuer_key : key;
  const bool eddsa = EVP_PKEY_get_id(signing_key) == EVP_PKEY_ED25519;
  check(X509_sign(c, signing_key, eddsa ? nullptr : EVP_sha256()) > 0, "signing");
  return cert;
}

std::string pem(X509* cert) {
  std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(bio.get(), cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string pem(EVP_PKEY* key) {
  std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>> bio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(n));
}

bool is_ip(const std::string& name) {
  ASN1_OCTET_STRING* ip = a2i_IPADDRESS(name.c_str());
  ASN1_OCTET_STRING_free(ip);
  return ip != nullptr;
}

std::string describe(const CertProfile& p) {
  std::string text = std::string(to_string(p.key_type)) + "/" + std::to_string(p.intermediates) +
                     "/" + p.root_name;
  for (const auto& n : p.names) text += "/" + n;
  return text;
}

std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

Credentials generate(const CertProfile& p) {
  const DeterministicRandom random(fnv1a(describe(p)));
  // One key per role: the intermediates share theirs (distinct RSA-4096 keys would take seconds
  // each).
  const Key root_key = generate_key(p.key_type);
  const Key ca_key = generate_key(p.key_type);
  const Key leaf_key = generate_key(p.key_type);
  std::string alt;
  for (const auto& n : p.names)
    alt += (alt.empty() ? "" : ",") + std::string(is_ip(n) ? "IP:" : "DNS:") + n;
  if (alt.empty()) throw std::invalid_argument("test certificates: no server names");

  long serial = 1;
  const Cert root = make_cert(p.root_name, serial++, root_key.get(), nullptr, nullptr, true, {});
  std::vector<Cert> intermediates;
  X509* issuer = root.get();
  EVP_PKEY* issuer_key = root_key.get();
  for (std::uint32_t i = 0; i < p.intermediates; ++i) {
    intermediates.push_back(make_cert("twinbench intermediate CA " + std::to_string(i + 1),
                                      serial++, ca_key.get(), issuer, issuer_key, true, {}));
    issuer = intermediates.back().get();
    issuer_key = ca_key.get();
  }
  const Cert leaf =
      make_cert(p.names.front(), serial++, leaf_key.get(), issuer, issuer_key, false, alt);

  Credentials out;
  out.ca_pem = pem(root.get());
  out.chain_pem = pem(leaf.get());
  for (auto it = intermediates.rbegin(); it != intermediates.rend(); ++it)
    out.chain_pem += pem(it->get());
  out.key_pem = pem(leaf_key.get());
  return out;
}

}  // namespace

const char* to_string(KeyType k) {
  switch (k) {
    case KeyType::kRsa2048:
      return "rsa2048";
    case KeyType::kRsa4096:
      return "rsa4096";
    case KeyType::kEd25519:
      return "ed25519";
    case KeyType::kEcdsaP256:
      return "ecdsa-p256";
  }
  return "?";
}

Credentials make_credentials(const CertProfile& profile) {
  static std::mutex mutex;
  static std::map<std::string, Credentials> made;
  std::lock_guard lock(mutex);
  const std::string key = describe(profile);
  auto it = made.find(key);
  if (it == made.end()) it = made.emplace(key, generate(profile)).first;
  return it->second;
}

}  // namespace tb::servercore
