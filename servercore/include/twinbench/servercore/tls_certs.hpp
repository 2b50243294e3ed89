#pragma once
// Test credentials made at run time with OpenSSL: a root CA (the clients' trust anchor), a chain
// of intermediate CAs and a server certificate, all of one key type. The chain length and key
// size set the size of the server's handshake flight (below or above IW10 = 14480 bytes). They
// are generated deterministically (seeded by the profile), so certificates and therefore every
// handshake's byte counts are the same in every process; the keys are test keys, never secrets.
#include <cstdint>
#include <string>
#include <vector>

namespace tb::servercore {

enum class KeyType { kRsa2048, kRsa4096, kEd25519, kEcdsaP256 };
const char* to_string(KeyType k);

struct CertProfile {
  KeyType key_type = KeyType::kRsa2048;
  std::uint32_t intermediates = 0;  // CA certificates between the root and the server's
  // Subject alternative names of the server certificate: host names or IP literals.
  std::vector<std::string> names = {"localhost", "127.0.0.1"};
  std::string root_name = "twinbench test root CA";  // another name: another, untrusted, root
};

struct Credentials {
  std::string ca_pem;     // the root certificate: what clients trust
  std::string chain_pem;  // the server certificate, then the intermediates (what the server sends)
  std::string key_pem;    // the server certificate's private key
};

// Costs up to seconds for RSA-4096 (each distinct profile is made once per process and cached).
Credentials make_credentials(const CertProfile& profile);

}  // namespace tb::servercore
