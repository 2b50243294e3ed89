// HTTPS over real sockets on 127.0.0.1: every client variant against the project's server with
// TLS 1.2 and 1.3, with and without resumption, for each key type; and the handshake failures.
#include <gtest/gtest.h>

#include <map>

#include "twinbench/live/live_backend.hpp"
#include "twinbench/runner/tls_setup.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

using namespace std::chrono_literals;

twinbench::Scenario https_scenario(const std::string& tls_text) {
  auto s = scenario::parse_scenario(
      "name: \"live_tls\"\n"
      "variants { name: \"c3_coop\" client: C3HTTP }\n"
      "variants { name: \"c3_thr\" client: C3HTTP threaded: true }\n"
      "variants { name: \"c3s_coop\" client: C3HTTP session: true }\n"
      "variants { name: \"c3s_thr\" client: C3HTTP threaded: true session: true }\n"
      "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
      "variants { name: \"nat_thr\" client: HTTP_REQUEST threaded: true }\n"
      "frame_caps: [120]\n"
      "body_bytes: [0, 102400, 1048576]\n"
      "runs: 2\nwarmups: 1\n"
      "tls { " +
          tls_text + " }\n",
      "live_tls");
  return s;
}

struct LiveRun {
  twinbench::ResultSet results;
  live::ServerStats server;
};

LiveRun run_https(const twinbench::Scenario& s, const std::string& host = "127.0.0.1",
                  bool server_tls = true) {
  const runner::TlsSetup tls = runner::make_tls_setup(s, {"127.0.0.1"});
  live::ServerOptions server_options;
  if (server_tls) server_options.tls = tls.server;
  live::LiveServer server(server_options);
  server.start();
  live::LiveBackend live;
  runner::RunOptions options;
  options.base_url = "https://" + host + ":" + std::to_string(server.port());
  options.request_timeout = 30s;
  options.tls = tls.client;
  LiveRun run{runner::run_scenario(s, live.backend(), options), {}};
  server.stop();
  run.server = server.stats();
  return run;
}

TEST(LiveTls, EveryVariantDownloadsOverHttpsForEveryTlsSetting) {
  for (const std::string tls :
       {"max_version: TLS1_3 key_type: RSA_2048", "max_version: TLS1_2 key_type: ED25519",
        "max_version: TLS1_3 key_type: ECDSA_P256 resumption: true",
        "min_version: TLS1_2 max_version: TLS1_2 key_type: RSA_4096 intermediates: 2 "
        "resumption: true",
        "min_version: TLS1_3 key_type: ED25519 intermediates: 3"}) {
    const auto run = run_https(https_scenario(tls));
    ASSERT_EQ(run.results.samples_size(), 3 * 3 * 6) << tls;
    std::map<std::string, int> reused;
    for (const auto& sample : run.results.samples()) {
      EXPECT_EQ(sample.result(), "success")
          << tls << " " << sample.variant() << " " << sample.body_bytes() << ": " << sample.error();
      EXPECT_EQ(sample.bytes_received(), sample.body_bytes() ? sample.body_bytes() : 12u)
          << tls << " " << sample.variant();  // ping: {"ok": true}
      reused[sample.variant()] += sample.reused_connection();
    }
    // The Session keeps its TLS connection alive: every request after the first reuses it.
    EXPECT_EQ(reused["c3s_coop"], 8) << tls;
    EXPECT_EQ(reused["c3s_thr"], 8) << tls;
    EXPECT_EQ(run.server.requests_served, 54u) << tls;
    EXPECT_EQ(run.server.connections_accepted, 4u * 9 + 2) << tls;
  }
}

TEST(LiveTls, WrongHostNameIsATlsHandshakeError) {
  auto s = https_scenario("max_version: TLS1_3");
  s.clear_body_bytes();
  s.add_body_bytes(0);
  // The certificate names 127.0.0.1 only.
  const auto run = run_https(s, "localhost");
  for (const auto& sample : run.results.samples()) {
    EXPECT_EQ(sample.result(), "tls_handshake_error") << sample.variant();
    EXPECT_NE(sample.error().find("hostname mismatch"), std::string::npos) << sample.error();
  }
  EXPECT_EQ(run.server.requests_served, 0u);
}

TEST(LiveTls, PlainHttpServerIsATlsHandshakeError) {
  auto s = https_scenario("max_version: TLS1_2");
  s.clear_body_bytes();
  s.add_body_bytes(0);
  const auto run = run_https(s, "127.0.0.1", false);
  for (const auto& sample : run.results.samples()) {
    EXPECT_EQ(sample.result(), "tls_handshake_error") << sample.variant();
    EXPECT_NE(sample.error().find("wrong version number"), std::string::npos) << sample.error();
  }
}

}  // namespace
}  // namespace tb
