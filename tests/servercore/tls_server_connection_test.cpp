// The TLS server connection's part in the head timeout: a handshake begun and not finished is owed
// like a head, and when it times out the connection closes without a word (there are no keys yet).
#include "twinbench/servercore/tls_server.hpp"

#include <gtest/gtest.h>

#include <string_view>

#include "twinbench/servercore/tls_certs.hpp"

namespace {

using namespace tb::server;

std::shared_ptr<const TlsServerContext> context() {
  CertProfile profile;
  profile.key_type = KeyType::kEd25519;
  profile.names = {"127.0.0.1"};
  const Credentials credentials = make_credentials(profile);
  TlsServerConfig config;
  config.chain_pem = credentials.chain_pem;
  config.key_pem = credentials.key_pem;
  return std::make_shared<const TlsServerContext>(config);
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
