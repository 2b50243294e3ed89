// The simulated TCP: Flow control: a slow reader, and bodies around the socket buffer sizes.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- flow control: a slow reader ----

// A bare transport on a simulated path with a 1 MiB download requested: for reading by hand.
struct RawDownload {
  explicit RawDownload(const twinbench::Network& n)
      : scope(1), net(n, 1), transport(net.client_transports().create()) {
    transport->connect({net.server_address(), net.server_port()});
    connected =
        scheduler.run_until([&] { return transport->status() == TransportStatus::kConnected; }, 5s);
    const std::string request = "GET " + download(1 << 20) + " HTTP/1.1\r\nHost: sim\r\n\r\n";
    if (connected)
      sent = transport->write_some(std::as_bytes(std::span(request))) == request.size();
  }
  SimulationScope scope;
  NsScheduler scheduler;
  SimNetwork net;
  std::unique_ptr<Transport> transport;
  bool connected = false;
  bool sent = false;
};

TEST(SimFlowControl, FrameGatedReaderGetsWindowUpdates) {
  // A 64 KiB receive buffer read 16 KiB per 16 ms frame: the sender is window-limited, and the
  // window reopens on each read (Linux tcp_cleanup_rbuf), so 1 MiB takes ~64 frames = ~1 s, not
  // ns-3's zero-window persist timeouts.
  auto n = with_server_nodelay(path());
  n.mutable_client_tcp()->set_receive_buffer_bytes(64 * 1024);
  RawDownload d(n);
  ASSERT_TRUE(d.connected);
  ASSERT_TRUE(d.sent);
  auto& scheduler = d.scheduler;
  auto& transport = d.transport;
  const Time start = scheduler.now();
  std::uint64_t received = 0;
  std::vector<std::byte> chunk(16 * 1024);
  std::function<void()> frame = [&] {
    if (auto r = transport->read_some(chunk); r.kind == ReadResult::Kind::kData)
      received += r.bytes;
    scheduler.schedule_in(16ms, frame);
  };
  scheduler.schedule_in(16ms, frame);
  ASSERT_TRUE(scheduler.run_until([&] { return received >= (1u << 20); }, 30s));
  const double ms = to_ms(scheduler.now() - start);
  EXPECT_GT(ms, 64 * 16 - 50);
  EXPECT_LT(ms, 64 * 16 + 200) << ms;
}

TEST(SimFlowControl, UnreadDataFillsTheReceiveBufferThenReadsReopenIt) {
  // A reader that does not read: the server may fill the 64 KiB receive buffer and no more
  // (whole segments only: the sender avoids a silly window). Reading it in odd-sized pieces then
  // delivers the whole response, in order, as the window reopens.
  constexpr std::uint32_t kBuffer = 64 * 1024;
  auto n = with_server_nodelay(path());
  n.mutable_client_tcp()->set_receive_buffer_bytes(kBuffer);
  RawDownload d(n);
  ASSERT_TRUE(d.connected);
  ASSERT_TRUE(d.sent);
  auto& scheduler = d.scheduler;
  auto& transport = d.transport;
  scheduler.run_until([] { return false; }, 2s);
  EXPECT_LE(transport->available(), kBuffer);
  EXPECT_GT(transport->available(), kBuffer - 1448);

  std::string response;
  std::vector<std::byte> chunk(1000);
  std::function<void()> read = [&] {
    while (true) {
      const auto r = transport->read_some(chunk);
      if (r.kind != ReadResult::Kind::kData) break;
      response.append(reinterpret_cast<const char*>(chunk.data()), r.bytes);
    }
    scheduler.schedule_in(1ms, read);
  };
  read();
  const auto head_end = [&] { return response.find("\r\n\r\n"); };
  ASSERT_TRUE(scheduler.run_until(
      [&] {
        return head_end() != std::string::npos && response.size() - head_end() - 4 >= (1u << 20);
      },
      30s));
  EXPECT_NE(response.find("Content-Length: 1048576\r\n"), std::string::npos)
      << response.substr(0, head_end());
  EXPECT_EQ(response.size() - head_end() - 4, 1u << 20);
  EXPECT_EQ(transport->available(), 0u);
}

// ---- bodies around the socket buffer sizes (send 4 MiB, receive 6 MiB) ----

constexpr std::uint64_t kMiB = 1 << 20;

TEST(SimBufferEdges, BodiesAroundTheBufferSizesRunAtTheBottleneckRate) {
  // A body that fits the server's 4 MiB send buffer is written whole at once; one that does not
  // waits for send space. Either way the transfer takes its wire time plus slow start and the loss
  // recovery at its end (the queue holds one BDP), a few RTTs, never a persist or RTO stall.
  for (const std::uint64_t bytes : {4 * kMiB - 1, 4 * kMiB, 4 * kMiB + 1, 6 * kMiB}) {
    const double ms = download_ms(path(), 1, bytes);
    EXPECT_GT(ms, wire_ms(bytes)) << bytes;
    EXPECT_LT(ms, wire_ms(bytes) + 10 * kRttMs) << bytes << ": " << ms;
  }
}

// Before the fix, 4 MiB - 1, 4 MiB and 4 MiB + 1 took ~67 s: the SACK recovery after startup's
// overshoot lost retransmissions that only the RTO found, and ns-3's rate samples had put
// ~40 kbit/s into BBR's bandwidth filter, so it paced one segment per ~120 ms afterwards.
TEST(SimBufferEdges, BbrServerBodiesAroundTheBufferSizes) {
  // BBR's startup overshoots the BDP queue; recovering from that loss must not end in an RTO
  // after which BBR paces at kbit/s (the 4 MiB, 67 s stall of the body_chunk_fps sweep, fixed by
  // Linux-like delivery-rate samples and RACK's lost-retransmission rule: docs/tcp-model.md).
  for (const std::uint64_t bytes :
       {2 * kMiB, 4 * kMiB - 1, 4 * kMiB, 4 * kMiB + 1, 6 * kMiB, 8 * kMiB}) {
    const double ms = download_ms(with_bbr_server(path(20, 100)), 1, bytes);
    EXPECT_GT(ms, wire_ms(bytes)) << bytes;
    EXPECT_LT(ms, wire_ms(bytes) + 10 * kRttMs) << bytes << ": " << ms;
  }
}

TEST(SimBufferEdges, FrameGatedReaderOfBodiesAroundTheBufferSizes) {
  // 64 KiB read per 16 ms frame (4 MiB/s, below the 12.5 MB/s link): the reader sets the pace; the
  // transfer ends a few RTTs after the frames needed to read the body.
  for (const std::uint64_t bytes : {4 * kMiB - 1, 4 * kMiB, 4 * kMiB + 1, 6 * kMiB}) {
    SimulationScope scope(1);
    NsScheduler scheduler;
    SimNetwork net(path(), 1);
    auto transport = net.client_transports().create();
    transport->connect({net.server_address(), net.server_port()});
    ASSERT_TRUE(scheduler.run_until(
        [&] { return transport->status() == TransportStatus::kConnected; }, 5s));
    const std::string request = "GET " + download(bytes) + " HTTP/1.1\r\nHost: sim\r\n\r\n";
    ASSERT_EQ(transport->write_some(std::as_bytes(std::span(request))), request.size());
    const Time start = scheduler.now();
    std::uint64_t received = 0;
    std::vector<std::byte> chunk(64 * 1024);
    std::function<void()> frame = [&] {
      if (auto r = transport->read_some(chunk); r.kind == ReadResult::Kind::kData)
        received += r.bytes;
      scheduler.schedule_in(16ms, frame);
    };
    scheduler.schedule_in(16ms, frame);
    ASSERT_TRUE(scheduler.run_until([&] { return received >= bytes; }, 120s)) << bytes;
    const double ms = to_ms(scheduler.now() - start);
    const double frames_ms = static_cast<double>((bytes + chunk.size() - 1) / chunk.size()) * 16;
    EXPECT_GT(ms, frames_ms) << bytes;
    EXPECT_LT(ms, frames_ms + 5 * kRttMs) << bytes << ": " << ms;
  }
}

}  // namespace
}  // namespace tb::sim
