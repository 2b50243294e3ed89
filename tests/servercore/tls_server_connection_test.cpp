// The TLS server connection's part in the head timeout: a handshake begun and not finished is owed
// like a head, and when it times out the connection closes without a word (there are no keys yet).
#include "twinbench/servercore/tls_server.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

#include "twinbench/servercore/tls_certs.hpp"

namespace {

using namespace tb::servercore;

TlsServerConfig config_with(KeyType key_type) {
  CertProfile profile;
  profile.key_type = key_type;
  profile.names = {"127.0.0.1"};
  const Credentials credentials = make_credentials(profile);
  TlsServerConfig config;
  config.chain_pem = credentials.chain_pem;
  config.key_pem = credentials.key_pem;
  return config;
}

std::shared_ptr<const TlsServerContext> context() {
  return std::make_shared<const TlsServerContext>(config_with(KeyType::kEd25519));
}

std::string error_of(const TlsServerConfig& config) {
  try {
    TlsServerContext context(config);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

// Credentials are read once per process and shared: a context made after a bad one, or after
// good ones, still gets its own checks.
TEST(TlsServerContext, BadCredentialsAreRefusedEveryTimeAndGoodOnesAfterThemWork) {
  const TlsServerConfig good = config_with(KeyType::kEcdsaP256);
  TlsServerConfig bad_key = good;
  bad_key.key_pem = "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n";
  TlsServerConfig bad_chain = good;
  bad_chain.chain_pem = "not a certificate";
  TlsServerConfig mismatched = good;
  mismatched.key_pem = config_with(KeyType::kEd25519).key_pem;  // not the certificate's
  for (int round = 0; round < 2; ++round) {
    EXPECT_NE(error_of(bad_key).find("TLS server key"), std::string::npos) << error_of(bad_key);
    EXPECT_NE(error_of(bad_chain).find("TLS server certificate"), std::string::npos);
    EXPECT_NE(error_of(mismatched).find("TLS server key"), std::string::npos);
    EXPECT_EQ(error_of(good), "no error");
  }
}

TEST(TlsServerConnection, AHandshakeBegunIsOwedAndItsTimeoutClosesSilently) {
  TlsServerConnection connection(context());
  EXPECT_FALSE(connection.receiving_request_head()) << "nothing received, nothing owed";
  // The first bytes of a ClientHello record: handshake, TLS 1.0 record version, length 512.
  constexpr std::string_view partial_hello("\x16\x03\x01\x02\x00\x01", 6);
  connection.on_receive(std::as_bytes(std::span(partial_hello.data(), partial_hello.size())));
  EXPECT_TRUE(connection.handshaking());
  EXPECT_TRUE(connection.receiving_request_head());
  connection.on_head_timeout();
  EXPECT_FALSE(connection.receiving_request_head());
  EXPECT_TRUE(connection.next_write().empty()) << "no alert without a handshake";
  EXPECT_TRUE(connection.should_close());
  EXPECT_EQ(connection.error(), "TLS handshake timed out");
}

}  // namespace
