#pragma once
// The simulated TCP tests' shared bench: a 40 ms RTT (20 ms each way), 100 Mbit/s path, and one
// HTTP client polled on every socket event so that times are exact. Expected times are derived
// from the mechanics in each test's comments: one full-size packet (1448 B payload + 52 B headers
// + 2 B PPP) takes 0.12 ms at 100 Mbit/s.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "twinbench/clientcore/delay_resolver.hpp"
#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/sim/ns_scheduler.hpp"
#include "twinbench/sim/sim_network.hpp"

namespace tb::sim::test {

using namespace std::chrono_literals;

constexpr double kRttMs = 40;

inline twinbench::Network path(double one_way_ms = kRttMs / 2, double mbps = 100) {
  twinbench::Network n;
  auto& link = *n.mutable_link();
  link.set_client_to_server_delay_ms(one_way_ms);
  link.set_server_to_client_delay_ms(one_way_ms);
  link.set_downlink_mbps(mbps);
  link.set_uplink_mbps(mbps);
  return n;
}

inline std::string download(std::uint64_t bytes) {
  return "/api/benchmark/download/" + std::to_string(bytes) + "/";
}

// One simulation with one HTTP client, polled on every socket event so that times are exact.
class Bench {
 public:
  explicit Bench(const twinbench::Network& network, std::uint64_t seed = 1)
      : scope_(seed),
        net_(network, seed),
        resolver_(scheduler_, Duration(0), {}),
        client_(net_.client_transports(), resolver_) {
    net_.client_transports().set_activity_callback(
        [this] { scheduler_.schedule_at(scheduler_.now(), [this] { pump(); }); });
  }

  void connect() {
    client_.connect_to_host(net_.server_address(), net_.server_port());
    ASSERT_TRUE(
        scheduler_.run_until([&] { return client_.status() == HttpStatus::kConnected; }, 5s));
  }

  // Request sent -> last body byte read, in ms.
  double get(const std::string& target) {
    body_bytes_ = 0;
    waiting_ = true;
    EXPECT_TRUE(client_.request("GET", target));
    const Time start = scheduler_.now();
    client_.poll();  // Godot 4.x sends the buffered request on the next poll
    EXPECT_TRUE(scheduler_.run_until([&] { return !waiting_; }, 60s)) << target;
    EXPECT_EQ(client_.response_code(), 200);
    return to_ms(finished_ - start);
  }

  void idle(Duration d) {
    scheduler_.run_until([] { return false; }, d);
  }
  std::uint64_t body_bytes() const { return body_bytes_; }
  SimNetwork& net() { return net_; }

 private:
  void pump() {
    client_.poll();
    while (client_.status() == HttpStatus::kBody) {
      const auto chunk = client_.read_response_body_chunk();
      if (chunk.empty()) break;
      body_bytes_ += chunk.size();
    }
    if (waiting_ && client_.status() == HttpStatus::kConnected && client_.has_response()) {
      waiting_ = false;
      finished_ = scheduler_.now();
    }
  }

  SimulationScope scope_;
  NsScheduler scheduler_;
  SimNetwork net_;
  DelayResolver resolver_;
  HttpClient client_;
  bool waiting_ = false;
  Time finished_{0};
  std::uint64_t body_bytes_ = 0;
};

inline twinbench::Network with_server_nodelay(twinbench::Network n) {
  n.mutable_server_tcp()->set_nodelay(
      true);  // like Nginx (tcp_nodelay on), the published server's front
  return n;
}

// The server of the body_chunk_fps sweep: BBR, paced, no slow-start-after-idle, nodelay.
inline twinbench::Network with_bbr_server(twinbench::Network n) {
  auto& tcp = *n.mutable_server_tcp();
  tcp.set_congestion_control(twinbench::BBR);
  tcp.set_pacing(true);
  tcp.set_slow_start_after_idle(false);
  tcp.set_nodelay(true);
  return n;
}

// Wire time of a body at 100 Mbit/s: 1448-byte segments of 1502 bytes on the wire.
inline double wire_ms(std::uint64_t bytes) {
  return static_cast<double>(bytes) / 1448 * 1502 * 8 / 100e6 * 1e3;
}

// A fresh connection's download, request sent to last byte read, in ms.
inline double download_ms(const twinbench::Network& n, std::uint64_t seed, std::uint64_t bytes) {
  Bench b(n, seed);
  b.connect();
  return b.get(download(bytes));
}

}  // namespace tb::sim::test
