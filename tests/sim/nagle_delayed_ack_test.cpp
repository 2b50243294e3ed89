// The simulated TCP: Nagle against delayed ACK, under Linux's quick-ACK and pingpong rules.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- Nagle + delayed ACK (docs/load.md, "Nagle, per side") under Linux's quick-ACK and pingpong rules ----
//
// The ping response is two small writes, head then body. With Nagle the body waits until the
// head is ACKed; whether the client delays that ACK follows Linux (docs/tcp-model.md).

struct PingRun {
  double fresh;         // first request on a new connection
  double back_to_back;  // next request sent as the previous response completes
  double after_frame;   // next request one 60 fps frame (16.7 ms) after the previous response
  double after_pause;   // next request 50 ms after the previous response
};

PingRun ping_run(bool server_nodelay) {
  auto n = path();
  n.mutable_server_tcp()->set_nodelay(server_nodelay);
  Bench b(n);
  b.connect();
  const std::string ping = "/api/benchmark/ping/";
  PingRun r{};
  r.fresh = b.get(ping);
  r.back_to_back = b.get(ping);
  b.idle(std::chrono::microseconds(16667));
  r.after_frame = b.get(ping);
  b.idle(50ms);
  r.after_pause = b.get(ping);
  return r;
}

TEST(SimNagle, NoDelayedAckStallOnAFreshConnection) {
  // The client's first data puts it in quick-ACK mode (tcp_event_data_recv: up to 16 immediate
  // ACKs) and it is not interactive (its request was no reply to received data), so it ACKs the
  // head at once: Nagle costs one RTT for that ACK, no delayed-ACK timeout.
  const PingRun nodelay = ping_run(true);
  const PingRun nagle = ping_run(false);
  EXPECT_GE(nodelay.fresh, kRttMs);
  EXPECT_LT(nodelay.fresh, kRttMs + 1) << nodelay.fresh;
  EXPECT_GE(nagle.fresh - nodelay.fresh, kRttMs - 1) << nagle.fresh;
  EXPECT_LT(nagle.fresh - nodelay.fresh, kRttMs + 1) << nagle.fresh;
}

TEST(SimNagle, AReplyWithinAtoMakesTheClientDelayTheHeadAck) {
  // A request sent less than ato (40 ms) after the last response data counts as a reply
  // (tcp_event_data_sent), which makes the client interactive (pingpong, threshold 1): it delays
  // the ACK of the next lone small head by ato = TCP_ATO_MIN (40 ms; ato > TCP_DELACK_MIN would
  // be needed to go above it). The body then needs one more RTT: RTT + 40 ms + RTT. The delayed
  // ACK timer leaves pingpong mode ("delayed ACK missed"), and the next quick reply re-enters it.
  // Measured on Linux 6.18 loopback: 40-48 ms stalls for requests 0, 16.7 and 33 ms after the
  // previous response; none after 50 ms.
  const PingRun nodelay = ping_run(true);
  const PingRun nagle = ping_run(false);
  for (double t : {nodelay.back_to_back, nodelay.after_frame, nodelay.after_pause}) {
    EXPECT_GE(t, kRttMs);
    EXPECT_LT(t, kRttMs + 1) << t;
  }
  EXPECT_GE(nagle.back_to_back - nodelay.back_to_back, 40 + kRttMs - 1) << nagle.back_to_back;
  EXPECT_LT(nagle.back_to_back - nodelay.back_to_back, 40 + kRttMs + 1) << nagle.back_to_back;
  EXPECT_GE(nagle.after_frame - nodelay.after_frame, 40 + kRttMs - 1) << nagle.after_frame;
  EXPECT_LT(nagle.after_frame - nodelay.after_frame, 40 + kRttMs + 1) << nagle.after_frame;
  // 50 ms > ato: no reply, so not interactive (the timer left pingpong mode): the head is ACKed
  // at once (quick ACKs remain), as on a fresh connection.
  EXPECT_GE(nagle.after_pause - nodelay.after_pause, kRttMs - 1) << nagle.after_pause;
  EXPECT_LT(nagle.after_pause - nodelay.after_pause, kRttMs + 1) << nagle.after_pause;
}

}  // namespace
}  // namespace tb::sim
