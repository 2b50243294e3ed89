// Reused OpenSSL contexts (tlsio/context_pool.hpp) must be indistinguishable from new ones: the
// same seed gives the same handshake bytes, ticket keys and random stream, and resumption state
// does not pass from one owner to the next.
#include <gtest/gtest.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/servercore/deterministic_random.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/servercore/tls_server.hpp"
#include "twinbench/tlsio/context_pool.hpp"
#include "twinbench/tlsio/queue_bio.hpp"

namespace {

using namespace tb;

const servercore::Credentials& credentials() {
  static const servercore::Credentials c = [] {
    servercore::CertProfile profile;
    profile.key_type = servercore::KeyType::kRsa2048;  // the published setup's key
    profile.names = {"127.0.0.1"};
    return servercore::make_credentials(profile);
  }();
  return c;
}

// A simulated server's settings (no blinding: pooled).
servercore::TlsServerConfig server_config() {
  servercore::TlsServerConfig config;
  config.chain_pem = credentials().chain_pem;
  config.key_pem = credentials().key_pem;
  config.resumption = false;  // no tickets: they hold the wall-clock time of their session
  config.tickets = 0;
  config.rsa_blinding = false;
  return config;
}

TlsClientConfig client_config() {
  TlsClientConfig config;
  config.trusted_ca_pem = credentials().ca_pem;
  return config;
}

// Settings no context had before in this process (PEM texts with more trailing newlines each
// time), so that the first contexts made from them are new whatever ran before in the process.
std::pair<servercore::TlsServerConfig, TlsClientConfig> settings_never_used() {
  static int calls = 0;
  const std::string newlines(static_cast<std::size_t>(++calls), '\n');
  std::pair<servercore::TlsServerConfig, TlsClientConfig> s{server_config(), client_config()};
  s.first.chain_pem += newlines;
  s.second.trusted_ca_pem += newlines;
  return s;
}

struct Outcome {
  std::string bytes;  // the handshake and one record each way, in the order they were sent
  std::array<unsigned char, 80> server_ticket_keys{};
  std::array<unsigned char, 80> client_ticket_keys{};
  std::uint64_t next_random = 0;  // the generator's next draw after it all
  const void* server_ctx = nullptr;
  const void* client_ctx = nullptr;
  long server_sessions = 0;  // in the server context's cache after the exchange
};

// A TLS 1.3 handshake between a client SSL of a TlsClientContext and a TlsServerConnection,
// then a request, its response and a clean close, all under DeterministicRandom(seed).
Outcome handshake(std::uint64_t seed, const servercore::TlsServerConfig& server_settings,
                  const TlsClientConfig& client_settings) {
  const servercore::DeterministicRandom random(seed);
  Outcome o;
  auto server_context = std::make_shared<const servercore::TlsServerContext>(server_settings);
  auto client_context = std::make_shared<TlsClientContext>(client_settings);
  o.server_ctx = server_context->native();
  o.client_ctx = client_context->native();
  SSL_CTX_get_tlsext_ticket_keys(server_context->native(), o.server_ticket_keys.data(), 80);
  SSL_CTX_get_tlsext_ticket_keys(client_context->native(), o.client_ticket_keys.data(), 80);
  {
    servercore::TlsServerConnection server(server_context);
    tlsio::ByteQueue to_server, to_client;
    SSL* client = SSL_new(client_context->native());
    SSL_set_bio(client, tlsio::make_queue_bio(to_client), tlsio::make_queue_bio(to_server));
    SSL_set_connect_state(client);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(client), "127.0.0.1");
    auto exchange = [&] {
      for (int i = 0; i < 20; ++i) {
        if (!to_server.empty()) {
          o.bytes.append(reinterpret_cast<const char*>(to_server.data().data()), to_server.size());
          server.on_receive(to_server.data());
          to_server.clear();
        }
        const auto write = server.next_write();
        if (write.empty()) return;
        o.bytes.append(reinterpret_cast<const char*>(write.data()), write.size());
        to_client.append(write);
        server.write_done();
        SSL_do_handshake(client);
      }
    };
    SSL_do_handshake(client);
    exchange();
    EXPECT_EQ(SSL_is_init_finished(client), 1) << "the handshake did not finish";
    const std::string request = "GET /api/benchmark/ping/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    EXPECT_GT(SSL_write(client, request.data(), static_cast<int>(request.size())), 0);
    exchange();
    std::array<char, 4096> response{};
    EXPECT_GT(SSL_read(client, response.data(), response.size()), 0) << "no response";
    SSL_shutdown(client);  // a clean close both ways, after which a session stays cached
    exchange();
    SSL_free(client);
  }
  o.server_sessions = SSL_CTX_sess_number(server_context->native());
  RAND_bytes(reinterpret_cast<unsigned char*>(&o.next_random), sizeof o.next_random);
  return o;
}

TEST(ContextReuse, AReusedContextGivesTheBytesANewOneGives) {
  const auto [server, client] = settings_never_used();
  const Outcome fresh = handshake(7, server, client);  // on new contexts
  const Outcome reused = handshake(7, server, client);
  // The second handshake did run on the first one's contexts, given back to the pool.
  ASSERT_EQ(reused.server_ctx, fresh.server_ctx);
  ASSERT_EQ(reused.client_ctx, fresh.client_ctx);
  EXPECT_GT(fresh.bytes.size(), 1000u);  // a certificate went by
  EXPECT_EQ(reused.bytes, fresh.bytes);
  EXPECT_EQ(reused.server_ticket_keys, fresh.server_ticket_keys);
  EXPECT_EQ(reused.client_ticket_keys, fresh.client_ticket_keys);
  EXPECT_EQ(reused.next_random, fresh.next_random);
  // And another seed still gives other bytes on the same contexts.
  const Outcome other = handshake(8, server, client);
  EXPECT_EQ(other.server_ctx, fresh.server_ctx);
  EXPECT_NE(other.bytes, fresh.bytes);
  EXPECT_NE(other.server_ticket_keys, fresh.server_ticket_keys);
}

TEST(ContextReuse, OnlySettingsThatMatchShareAContextAndABlindedServerKeyNeverDoes) {
  const servercore::TlsServerConfig settings = settings_never_used().first;
  const void* first = nullptr;
  {
    const servercore::TlsServerContext a(settings);
    first = a.native();
    SSL_CTX_set_app_data(a.native(), &first);  // marks this context
  }
  {
    servercore::TlsServerConfig other = settings;
    other.tickets = 3;  // other settings: not the marked context
    const servercore::TlsServerContext b(other);
    EXPECT_EQ(SSL_CTX_get_app_data(b.native()), nullptr);
  }
  {
    servercore::TlsServerConfig blinded = settings;
    blinded.rsa_blinding = true;  // a live server's key: its contexts are never reused
    const servercore::TlsServerContext c(blinded);
    SSL_CTX_set_app_data(c.native(), &first);
  }
  {
    servercore::TlsServerConfig blinded = settings;
    blinded.rsa_blinding = true;
    const servercore::TlsServerContext d(blinded);
    EXPECT_EQ(SSL_CTX_get_app_data(d.native()), nullptr);  // a new one, not c's
  }
  const servercore::TlsServerContext e(settings);
  EXPECT_EQ(SSL_CTX_get_app_data(e.native()), &first);  // the marked one, given back
}

TEST(ContextReuse, AServersCachedSessionsAreGoneWhenItsContextIsTakenAgain) {
  // TLS 1.2 without tickets: the server keeps each session in its context's cache.
  auto [server, client] = settings_never_used();
  server.max_version = servercore::TlsVersion::k1_2;
  server.resumption = true;
  client.max_version = TlsVersion::k1_2;
  const Outcome first = handshake(9, server, client);
  EXPECT_EQ(first.server_sessions, 1);
  const servercore::TlsServerContext again(server);
  ASSERT_EQ(again.native(), first.server_ctx);
  EXPECT_EQ(SSL_CTX_sess_number(again.native()), 0);
}

TEST(ContextReuse, AClientsSavedSessionsStayWithIt) {
  TlsClientConfig config = settings_never_used().second;
  config.resumption = true;
  const void* first = nullptr;
  {
    TlsClientContext a(config);
    first = a.native();
    SSL_SESSION* session = SSL_SESSION_new();
    a.save_session("127.0.0.1:443", session);
    SSL_SESSION* saved = a.saved_session("127.0.0.1:443");
    ASSERT_NE(saved, nullptr);
    SSL_SESSION_free(saved);
  }
  TlsClientContext b(config);
  ASSERT_EQ(b.native(), first);                          // the same OpenSSL context
  EXPECT_EQ(b.saved_session("127.0.0.1:443"), nullptr);  // but none of a's sessions
  // And sessions the context saves reach their new owner.
  EXPECT_EQ(SSL_CTX_get_app_data(b.native()), &b);
}

TEST(ContextReuse, AContextLeftUnconfiguredIsNotGivenBack) {
  static int calls = 0;  // a key of its own each time (--gtest_repeat)
  const std::string key = "context-reuse-test-" + std::to_string(++calls);
  const void* first = nullptr;
  {
    tlsio::PooledContext a = tlsio::take_context(key, TLS_server_method());
    ASSERT_TRUE(a.fresh());
    first = a.get();
    SSL_CTX_set_app_data(a.get(), &first);
    // Its owner failed to configure it (a bad certificate, say): it must not be taken again.
  }
  tlsio::PooledContext b = tlsio::take_context(key, TLS_server_method());
  EXPECT_TRUE(b.fresh());
  EXPECT_EQ(SSL_CTX_get_app_data(b.get()), nullptr);
  b.configured();
  SSL_CTX_set_app_data(b.get(), &first);
  const SSL_CTX* kept = b.get();
  b = tlsio::PooledContext();  // given back
  tlsio::PooledContext c = tlsio::take_context(key, TLS_server_method());
  EXPECT_FALSE(c.fresh());
  EXPECT_EQ(c.get(), kept);
  EXPECT_EQ(SSL_CTX_get_app_data(c.get()), &first);
}

}  // namespace
