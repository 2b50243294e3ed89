// Packet captures of a simulation (`twinbench run --pcap DIR`): what the two hosts sent and
// received, readable by tcpdump/Wireshark, and byte-identical run to run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_network.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return b[at] | b[at + 1] << 8 | b[at + 2] << 16 | static_cast<std::uint32_t>(b[at + 3]) << 24;
}

struct TcpPacket {
  double time_s;
  std::uint16_t src_port;
  std::uint8_t flags;
  std::size_t payload;
};

// A classic pcap file of PPP frames carrying IPv4/TCP (what SimNetwork::capture writes).
std::vector<TcpPacket> parse_pcap(const std::vector<std::uint8_t>& b) {
  std::vector<TcpPacket> packets;
  EXPECT_GE(b.size(), 24u);
  if (b.size() < 24) return packets;
  EXPECT_EQ(le32(b, 0), 0xa1b2c3d4u) << "pcap magic (microsecond timestamps, little-endian)";
  EXPECT_EQ(le32(b, 20), 9u) << "link type PPP";
  for (std::size_t at = 24; at + 16 <= b.size();) {
    const std::uint32_t captured = le32(b, at + 8);
    const std::size_t frame = at + 16;
    if (frame + captured > b.size()) {
      ADD_FAILURE() << "truncated record at byte " << at;
      break;
    }
    const std::size_t ip = frame + 2;  // PPP protocol field, 0x0021 = IPv4
    EXPECT_EQ(b[frame] << 8 | b[frame + 1], 0x0021);
    const std::size_t ip_header = (b[ip] & 0x0f) * 4u;
    const std::size_t ip_total = b[ip + 2] << 8 | b[ip + 3];
    const std::size_t tcp = ip + ip_header;
    const std::size_t tcp_header = (b[tcp + 12] >> 4) * 4u;
    packets.push_back(TcpPacket{le32(b, at) + le32(b, at + 4) / 1e6,
                                static_cast<std::uint16_t>(b[tcp] << 8 | b[tcp + 1]), b[tcp + 13],
                                ip_total - ip_header - tcp_header});
    at = frame + captured;
  }
  return packets;
}

twinbench::Scenario one_download() {
  return scenario::parse_scenario(R"(
      name: "capture"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [60]
      body_bytes: [20000]
      runs: 2
      warmups: 0
      network {
        link { client_to_server_delay_ms: 10 server_to_client_delay_ms: 10
               downlink_mbps: 100 uplink_mbps: 10 }
      }
  )",
                                  "capture");
}

TEST(SimCapture, RecordsBothHostsPacketsAndIsTheSameRunToRun) {
  const fs::path dir =
      fs::temp_directory_path() / ("twinbench-capture-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const auto s = one_download();
  const auto results = sim::run_simulated(s, runner::RunOptions{}, 1, (dir / "a").string());
  ASSERT_EQ(results.samples_size(), 2);
  sim::run_simulated(s, runner::RunOptions{}, 1, (dir / "b").string());
  // Published under their final names once the run is over: nothing else is left in the directory.
  std::vector<std::string> names;
  for (const auto& f : fs::directory_iterator(dir / "a"))
    names.push_back(f.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"part-0-client.pcap", "part-0-server.pcap"}));

  for (const char* host : {"client", "server"}) {
    const std::string name = std::string("part-0-") + host + ".pcap";
    const auto a = read_file(dir / "a" / name);
    EXPECT_EQ(a, read_file(dir / "b" / name)) << name;
    const auto packets = parse_pcap(a);
    // Two fresh connections (no Session), each opened by the client and closed by both ends.
    int client_syns = 0;
    std::size_t body_and_headers = 0;
    for (const auto& p : packets) {
      const bool syn = p.flags & 0x02, ack = p.flags & 0x10;
      const bool from_server = p.src_port == sim::SimNetwork::kServerPort;
      if (syn && !ack && !from_server) ++client_syns;
      if (from_server) body_and_headers += p.payload;
    }
    EXPECT_EQ(client_syns, 2) << host;
    EXPECT_GT(body_and_headers, 2u * 20000) << host;  // both bodies, and their response headers
    ASSERT_FALSE(packets.empty());
    // Simulated time: the first SYN leaves the client at 0 and reaches the server one way later.
    EXPECT_NEAR(packets.front().time_s, std::string(host) == "client" ? 0.0 : 0.010, 1e-4) << host;
    // Timestamps are simulated time: the run lasts a few round trips per request, not wall time.
    EXPECT_LT(packets.back().time_s, 2.0);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tb
