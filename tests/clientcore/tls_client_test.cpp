// TLS in the client core over the in-memory network (10 ms each way): the handshake's round trips,
// resumption, certificate and host-name checks, and a server that does not speak TLS.
#include <gtest/gtest.h>

#include "clientcore/model_fixture.hpp"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace tb::testing {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<const servercore::TlsServerContext> server_context(const servercore::Credentials& c,
                                                                   TlsVersion max,
                                                                   bool resumption = true) {
  servercore::TlsServerConfig config;
  config.chain_pem = c.chain_pem;
  config.key_pem = c.key_pem;
  config.max_version =
      max == TlsVersion::k1_2 ? servercore::TlsVersion::k1_2 : servercore::TlsVersion::k1_3;
  config.resumption = resumption;
  return std::make_shared<const servercore::TlsServerContext>(config);
}

servercore::Credentials bench_credentials(std::string root = "twinbench test root CA",
                                          std::vector<std::string> names = {"bench.test",
                                                                            "10.0.0.1"}) {
  servercore::CertProfile profile;
  profile.key_type = servercore::KeyType::kEd25519;
  profile.names = std::move(names);
  profile.root_name = std::move(root);
  return servercore::make_credentials(profile);
}

std::shared_ptr<TlsClientContext> client_context(const std::string& ca, TlsVersion max,
                                                 bool resumption = false) {
  TlsClientConfig config;
  config.trusted_ca_pem = ca;
  config.max_version = max;
  config.resumption = resumption;
  return std::make_shared<TlsClientContext>(config);
}

// An HttpClient polled after every event of the virtual network, so statuses change exactly when
// bytes arrive.
struct TlsBench {
  explicit TlsBench(std::function<std::unique_ptr<Peer>()> peers)
      : resolver(scheduler, 0ms, {{"bench.test", "10.0.0.1"}, {"other.test", "10.0.0.1"}}),
        network(scheduler, LinkConfig{10ms, 0}, std::move(peers)) {}

  // Connects and returns how long CONNECTING (TCP + TLS) lasted.
  Duration connect(HttpClient& c, const std::string& host, std::shared_ptr<TlsClientContext> tls) {
    const Time start = scheduler.now();
    c.connect_to_host(host, 443, std::move(tls));
    poll_until(c, [&] {
      return c.status() != HttpStatus::kResolving && c.status() != HttpStatus::kConnecting;
    });
    return scheduler.now() - start;
  }
  void poll_until(HttpClient& c, const std::function<bool()>& done) {
    c.poll();
    for (int i = 0; i < 100000 && !done() && scheduler.step(); ++i) c.poll();
  }
  int ping(HttpClient& c) {
    EXPECT_TRUE(c.request("GET", "/api/benchmark/ping/"));
    poll_until(c, [&] { return c.status() != HttpStatus::kRequesting; });
    std::string body;
    poll_until(c, [&] {
      for (auto chunk = c.read_response_body_chunk(); !chunk.empty();
           chunk = c.read_response_body_chunk())
        body.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
      return c.status() != HttpStatus::kBody;
    });
    EXPECT_EQ(body, R"({"ok": true})");
    return c.response_code();
  }

  VirtualScheduler scheduler;
  DelayResolver resolver;
  MemoryNetwork network;
};

TEST(TlsClient, FullHandshakeCostsOneRoundTripWithTls13AndTwoWithTls12) {
  const auto creds = bench_credentials();
  for (const auto version : {TlsVersion::k1_3, TlsVersion::k1_2}) {
    TlsBench bench(server_peers(nullptr, {}, server_context(creds, version)));
    HttpClient client(bench.network, bench.resolver);
    const Duration took =
        bench.connect(client, "bench.test", client_context(creds.ca_pem, version));
    ASSERT_EQ(client.status(), HttpStatus::kConnected) << client.error();
    // TCP: 1 RTT (20 ms); TLS 1.3: +1 RTT; TLS 1.2: +2 RTT.
    EXPECT_EQ(took, version == TlsVersion::k1_3 ? 40ms : 60ms);
    EXPECT_EQ(bench.ping(client), 200);
    EXPECT_EQ(bench.ping(client), 200);  // keep-alive over the same TLS connection
  }
}

TEST(TlsClient, ResumptionShortensTls12AndIsAcceptedByTls13) {
  const auto creds = bench_credentials();
  for (const auto version : {TlsVersion::k1_2, TlsVersion::k1_3}) {
    TlsBench bench(server_peers(nullptr, {}, server_context(creds, version)));
    const auto tls = client_context(creds.ca_pem, version, true);
    std::vector<Duration> took;
    for (int i = 0; i < 2; ++i) {
      HttpClient client(bench.network, bench.resolver);
      took.push_back(bench.connect(client, "bench.test", tls));
      ASSERT_EQ(client.status(), HttpStatus::kConnected) << client.error();
      EXPECT_EQ(bench.ping(client), 200);  // TLS 1.3 tickets arrive after the handshake
    }
    // TLS 1.2: the abbreviated handshake takes 1 RTT instead of 2; TLS 1.3 stays at 1 RTT.
    EXPECT_EQ(took[0], version == TlsVersion::k1_3 ? 40ms : 60ms);
    EXPECT_EQ(took[1], 40ms);
  }
  // That TLS 1.3 really resumed: the transport says so.
  TlsBench bench(server_peers(nullptr, {}, server_context(creds, TlsVersion::k1_3)));
  const auto tls = client_context(creds.ca_pem, TlsVersion::k1_3, true);
  for (int i = 0; i < 2; ++i) {
    TlsClientTransport t(bench.network.create(), tls, "bench.test");
    t.connect(Endpoint{"10.0.0.1", 443});
    while (t.status() == TransportStatus::kConnecting && bench.scheduler.step()) {
    }
    ASSERT_EQ(t.status(), TransportStatus::kConnected) << t.error();
    EXPECT_EQ(t.session_reused(), i == 1);
    const std::string request = "GET /api/benchmark/ping/ HTTP/1.1\r\nHost: bench.test\r\n\r\n";
    ASSERT_EQ(t.write_some(std::as_bytes(std::span(request))), request.size());
    std::array<std::byte, 4096> buf;
    ReadResult r;
    while ((r = t.read_some(buf)).kind == ReadResult::Kind::kWouldBlock && bench.scheduler.step()) {
    }
    ASSERT_EQ(r.kind, ReadResult::Kind::kData);  // the ticket was read on the way
    t.close();
  }
}

TEST(TlsClient, WrongHostNameFailsTheHandshakeWithTheReason) {
  const auto creds = bench_credentials();
  TlsBench bench(server_peers(nullptr, {}, server_context(creds, TlsVersion::k1_3)));
  HttpClient client(bench.network, bench.resolver);
  bench.connect(client, "other.test", client_context(creds.ca_pem, TlsVersion::k1_3));
  EXPECT_EQ(client.status(), HttpStatus::kTlsHandshakeError);
  EXPECT_NE(client.error().find("certificate verify failed"), std::string::npos) << client.error();
  EXPECT_NE(client.error().find("hostname mismatch"), std::string::npos) << client.error();
}

TEST(TlsClient, UntrustedChainFailsTheHandshakeWithTheReason) {
  const auto creds = bench_credentials();
  const auto stranger = bench_credentials("another root CA");
  for (const auto version : {TlsVersion::k1_3, TlsVersion::k1_2}) {
    TlsBench bench(server_peers(nullptr, {}, server_context(stranger, version)));
    HttpClient client(bench.network, bench.resolver);
    bench.connect(client, "bench.test", client_context(creds.ca_pem, version));
    EXPECT_EQ(client.status(), HttpStatus::kTlsHandshakeError);
    EXPECT_NE(client.error().find("certificate verify failed"), std::string::npos)
        << client.error();
    EXPECT_NE(client.error().find("unable to get local issuer certificate"), std::string::npos)
        << client.error();
  }
}

// The trusted certificates of a PEM text are read once per process: a text without any is refused
// each time it is given, and the same text read before still makes a context that trusts them.
TEST(TlsClient, ACaPemWithoutCertificatesIsRefusedEveryTime) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      client_context("not a certificate", TlsVersion::k1_3);
      ADD_FAILURE() << "accepted a CA PEM without certificates";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("no certificate in the trusted CA PEM"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(TlsClient, PlainHttpServerFailsTheHandshakeWithTheReason) {
  const auto creds = bench_credentials();
  TlsBench bench(server_peers());  // the benchmark server without TLS: answers 400 and closes
  HttpClient client(bench.network, bench.resolver);
  bench.connect(client, "bench.test", client_context(creds.ca_pem, TlsVersion::k1_3));
  EXPECT_EQ(client.status(), HttpStatus::kTlsHandshakeError);
  EXPECT_NE(client.error().find("TLS handshake with bench.test failed: "), std::string::npos)
      << client.error();
  EXPECT_NE(client.error().find("wrong version number"), std::string::npos) << client.error();
}

TEST(TlsClient, ModelsReportTlsHandshakeErrorAndSucceedOverHttps) {
  const auto creds = bench_credentials();
  const auto tls = client_context(creds.ca_pem, TlsVersion::k1_3);
  for (const bool c3 : {false, true}) {
    ModelBench bench(60, LinkConfig{},
                     server_peers(nullptr, {}, server_context(creds, TlsVersion::k1_3)));
    std::unique_ptr<ClientModel> model;
    if (c3)
      model = std::make_unique<C3HttpModel>(bench.runtime(), C3HttpOptions{.tls = tls});
    else
      model = std::make_unique<HttpRequestModel>(bench.runtime(), HttpRequestOptions{.tls = tls});
    RequestSpec good;
    good.url = "https://bench.test:8927/api/benchmark/ping/";
    const auto ok = bench.run(*model, good);
    EXPECT_EQ(ok.completion.result, RequestResult::kSuccess) << ok.completion.error;
    EXPECT_EQ(ok.completion.http_status, 200);
    RequestSpec wrong;
    wrong.url = "https://10.0.0.2:8927/api/benchmark/ping/";  // the certificate does not name it
    const auto failed = bench.run(*model, wrong);
    EXPECT_EQ(failed.completion.result, RequestResult::kTlsHandshakeError);
    EXPECT_NE(failed.completion.error.find("IP address mismatch"), std::string::npos)
        << failed.completion.error;
  }
  // Without a TLS configuration an https URL is refused, not sent in clear.
  ModelBench bench(60);
  C3HttpModel model(bench.runtime(), C3HttpOptions{});
  RequestSpec spec;
  spec.url = "https://bench.test:8927/api/benchmark/ping/";
  EXPECT_EQ(bench.run(model, spec).completion.result, RequestResult::kRequestFailed);
}

}  // namespace
}  // namespace tb::testing
