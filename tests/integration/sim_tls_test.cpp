// HTTPS over the simulated path (ns-3, 50 ms RTT, 100 Mbit/s): setup cost emerges from the real
// handshake bytes. The request is written when the client reaches CONNECTED, so CONNECTING's
// length is the setup cost: TCP 1 RTT, TLS 1.3 +1 RTT, TLS 1.2 +2 RTT, resumed TLS 1.2 +1 RTT, a
// server flight above IW10 +1 RTT. And HTTPS results are byte-identical run to run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/clientcore/delay_resolver.hpp"
#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/servercore/deterministic_random.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/sim/ns_scheduler.hpp"
#include "twinbench/sim/sim_network.hpp"
#include "support/child_process.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr double kRttMs = 50;

twinbench::Network path() {
  twinbench::Network n;
  auto& link = *n.mutable_link();
  link.set_client_to_server_delay_ms(kRttMs / 2);
  link.set_server_to_client_delay_ms(kRttMs / 2);
  link.set_downlink_mbps(100);
  link.set_uplink_mbps(100);
  // Nagle off on the client: its request is not held behind its unacknowledged Finished, so the
  // request leaves the host when it is written (docs/tls.md on the Nagle case).
  n.mutable_client_tcp()->set_nodelay(true);
  return n;
}

struct TlsCase {
  TlsVersion version = TlsVersion::k1_3;
  servercore::KeyType key = servercore::KeyType::kRsa2048;
  std::uint32_t intermediates = 0;
  bool resumption = false;
  double handshake_cpu_ms = 0;
};

struct Timing {
  double connect_ms;   // connect_to_host() to CONNECTED: when the request is written
  double response_ms;  // request written to the response head read
};

// Two connections one after the other (the second may resume), each with one ping.
std::vector<Timing> measure(const TlsCase& c) {
  servercore::CertProfile profile;
  profile.key_type = c.key;
  profile.intermediates = c.intermediates;
  profile.names = {sim::SimNetwork::kServerAddress};
  const auto creds = servercore::make_credentials(profile);

  sim::SimulationScope scope(1);
  const servercore::DeterministicRandom random(1);
  sim::NsScheduler scheduler;
  const auto v =
      c.version == TlsVersion::k1_2 ? servercore::TlsVersion::k1_2 : servercore::TlsVersion::k1_3;
  auto server_tls = std::make_shared<const servercore::TlsServerContext>(
      servercore::TlsServerConfig{creds.chain_pem, creds.key_pem, v, v, c.resumption});
  sim::SimNetwork net(path(), 1, {}, sim::SimTls{server_tls, c.handshake_cpu_ms});
  auto client_tls = std::make_shared<TlsClientContext>(
      TlsClientConfig{creds.ca_pem, c.version, c.version, c.resumption});

  DelayResolver resolver(scheduler, 0ms, {});  // unused: the URL has an IP literal
  std::vector<Timing> timings;
  for (int i = 0; i < 2; ++i) {
    HttpClient client(net.client_transports(), resolver);
    std::optional<Time> connected, answered;
    net.client_transports().set_activity_callback([&] {
      client.poll();
      if (!connected && client.status() == HttpStatus::kConnected) {
        connected = scheduler.now();
        client.request("GET", "/api/benchmark/ping/");
        client.poll();  // the request goes out now
      }
      if (connected && !answered && client.status() == HttpStatus::kBody)
        answered = scheduler.now();
    });
    const Time start = scheduler.now();
    client.connect_to_host(sim::SimNetwork::kServerAddress, net.server_port(), client_tls);
    EXPECT_TRUE(scheduler.run_until(
        [&] { return answered.has_value() || client.status() == HttpStatus::kTlsHandshakeError; },
        10s))
        << client.error();
    EXPECT_TRUE(answered.has_value()) << client.error();
    if (!answered) return timings;
    timings.push_back({to_ms(*connected - start), to_ms(*answered - *connected)});
    while (client.status() == HttpStatus::kBody && !client.read_response_body_chunk().empty()) {
    }
    net.client_transports().set_activity_callback(nullptr);
    client.close();
    scheduler.run_until([] { return false; }, 100ms);  // the close settles
  }
  return timings;
}

// Setup cost in RTTs: within 3 ms of the whole number (serialization of a few kB at 100 Mbit/s).
void expect_rtts(double ms, int rtts, const std::string& what) {
  EXPECT_GE(ms, rtts * kRttMs) << what;
  EXPECT_LT(ms, rtts * kRttMs + 3) << what;
}

TEST(SimTls, Tls13FullHandshakeAddsOneRoundTripTls12Two) {
  const auto tls13 = measure({.version = TlsVersion::k1_3});
  const auto tls12 = measure({.version = TlsVersion::k1_2});
  ASSERT_EQ(tls13.size(), 2u);
  ASSERT_EQ(tls12.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    expect_rtts(tls13[i].connect_ms, 2, "TLS 1.3: TCP + 1");
    expect_rtts(tls12[i].connect_ms, 3, "TLS 1.2: TCP + 2");
    expect_rtts(tls13[i].response_ms, 1, "request -> response head");
    expect_rtts(tls12[i].response_ms, 1, "request -> response head");
  }
  std::cout << "TLS 1.3 connect " << tls13[0].connect_ms << " ms, TLS 1.2 connect "
            << tls12[0].connect_ms << " ms\n";
}

TEST(SimTls, ResumptionSavesWhatItShould) {
  const auto tls12 = measure({.version = TlsVersion::k1_2, .resumption = true});
  const auto tls13 = measure({.version = TlsVersion::k1_3, .resumption = true});
  ASSERT_EQ(tls12.size(), 2u);
  ASSERT_EQ(tls13.size(), 2u);
  expect_rtts(tls12[0].connect_ms, 3, "TLS 1.2 full");
  expect_rtts(tls12[1].connect_ms, 2, "TLS 1.2 abbreviated: 1 RTT instead of 2");
  expect_rtts(tls13[0].connect_ms, 2, "TLS 1.3 full");
  expect_rtts(tls13[1].connect_ms, 2, "TLS 1.3 resumed (no 0-RTT): still 1 RTT");
  // Resumed TLS 1.3 skips the certificate and its signature: a smaller flight, so a little sooner.
  EXPECT_LT(tls13[1].connect_ms, tls13[0].connect_ms);
  std::cout << "TLS 1.2 resumed " << tls12[1].connect_ms << " ms, TLS 1.3 resumed "
            << tls13[1].connect_ms << " ms\n";
}

TEST(SimTls, ServerFlightLargerThanIw10CostsOneMoreRoundTrip) {
  // RSA-4096 certificates are ~1.4 kB each: with 10 intermediates the flight exceeds 10 x 1448
  // bytes.
  const auto small = measure({.key = servercore::KeyType::kRsa4096, .intermediates = 1});
  const auto large = measure({.key = servercore::KeyType::kRsa4096, .intermediates = 10});
  ASSERT_EQ(small.size(), 2u);
  ASSERT_EQ(large.size(), 2u);
  expect_rtts(small[0].connect_ms, 2, "flight within IW10");
  expect_rtts(large[0].connect_ms, 3, "flight beyond IW10");
  std::cout << "RSA-4096 x2 " << small[0].connect_ms << " ms, x11 " << large[0].connect_ms
            << " ms\n";
}

TEST(SimTls, HandshakeCpuTimeDelaysTheServerFlight) {
  const auto t = measure({.key = servercore::KeyType::kEd25519, .handshake_cpu_ms = 7});
  ASSERT_EQ(t.size(), 2u);
  EXPECT_GE(t[0].connect_ms, 2 * kRttMs + 7);
  EXPECT_LT(t[0].connect_ms, 2 * kRttMs + 7 + 3);
}


// The same HTTPS scenario twice, and in parallel worker processes: byte-identical result files.
// ECDSA's signatures vary in length with their random nonce, so this also checks that OpenSSL's
// randomness is seeded in simulation.
TEST(SimTls, SameSeedGivesByteIdenticalFiles) {
  const fs::path dir =
      fs::temp_directory_path() / ("twinbench-simtls-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "https.textproto")
      << "name: \"https\"\n"
         "variants { name: \"c3_coop\" client: C3HTTP }\n"
         "variants { name: \"c3s_coop\" client: C3HTTP session: true }\n"
         "variants { name: \"nat_coop\" client: HTTP_REQUEST }\n"
         "frame_caps: [60, 120]\n"
         "body_bytes: [0, 20480]\n"
         "runs: 2\nwarmups: 1\n"
         "session_scope: PER_FRAME_CAP\n"
         "target { base_url: \"https://bench.example:443\" }\n"
         "tls { key_type: ECDSA_P256 intermediates: 1 resumption: true }\n"
         "network {\n"
         "  link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20\n"
         "         downlink_mbps: 50 uplink_mbps: 20 loss_rate: 0.01 }\n"
         "}\n";
  auto run = [&](const std::string& name, const std::string& jobs) {
    ::testing::internal::CaptureStdout();
    const int code = app::main_with_args({"twinbench", "run", (dir / "https.textproto").string(),
                                          "--backend", "sim", "-q", "--seed", "3", "--jobs", jobs,
                                          "--out", (dir / name).string()});
    ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(code, 0);
    return testing::file_text(dir / name / "results.json") +
           testing::file_text(dir / name / "results.csv");
  };
  const std::string first = run("a", "1");
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, run("b", "1"));
  EXPECT_EQ(first, run("c", "2"));
  EXPECT_EQ(first.find("tls_handshake_error"), std::string::npos);
  EXPECT_NE(first.find("\"result\": \"success\""), std::string::npos);
  fs::remove_all(dir);
}

TEST(SimTlsTickets, TicketsAckTheClientsFinishedSoNagleDoesNotHoldTheFirstRequest) {
  // A Nagle-on client writes its TLS 1.3 Finished, then (a poll later) its request: Nagle holds
  // the small request until the Finished is ACKed. Tickets carry that ACK at once (one RTT after
  // the Finished); a server that sends none ACKs with a delayed ACK (40 ms: it is interactive after
  // its handshake reply).
  auto fresh_ping_ms = [](unsigned tickets) {
    auto s = scenario::parse_scenario(R"(
        name: "tickets"
        variants { name: "c3_coop" client: C3HTTP }
        frame_caps: [0]
        body_bytes: [0]
        runs: 3
        warmups: 1
        frame_loop { frame_work_ms: 1 }
        target { base_url: "https://bench.test" }
        tls { max_version: TLS1_3 }
        network {
          link { client_to_server_delay_ms: 10 server_to_client_delay_ms: 10 downlink_mbps: 100 uplink_mbps: 100 }
          server_tcp { nodelay: true }
        }
    )",
                                      "tickets");
    s.mutable_tls()->set_server_tickets(tickets);
    const auto results = sim::run_simulated(s, runner::RunOptions{}, 1);
    EXPECT_EQ(results.samples(results.samples_size() - 1).result(), "success");
    return results.samples(results.samples_size() - 1).elapsed_ms();
  };
  const double without = fresh_ping_ms(0);
  const double with = fresh_ping_ms(2);
  // TCP, TLS 1.3, the wait for the Finished's ACK, the request: 4 RTT (80 ms) and a few frames.
  EXPECT_GT(with, 4 * 20) << with;
  EXPECT_LT(with, 4 * 20 + 10) << with;
  EXPECT_GT(without - with, 15) << without << " vs " << with;  // 40 ms delayed ACK instead of 1 RTT
}

}  // namespace
}  // namespace tb
