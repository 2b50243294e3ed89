// The simulated TCP: A lost partial last segment is resent whatever Nagle says.
#include <gtest/gtest.h>

#include <ns3/error-model.h>
#include <ns3/inet-socket-address.h>
#include <ns3/ipv4-address.h>
#include <ns3/ipv4-header.h>
#include <ns3/point-to-point-net-device.h>
#include <ns3/ppp-header.h>
#include <ns3/tcp-header.h>

#include <chrono>
#include <optional>
#include <string>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;
using namespace test;

// ---- a lost last segment shorter than the MSS (the end of a response) ----
//
// Linux applies Nagle to new data only (tcp_write_xmit's tcp_nagle_test); a retransmission goes
// whatever its size (tcp_retransmit_skb). ns-3 applied its Nagle check to retransmissions too, so
// with the server's Nagle on, a lost partial last segment was never resent: recovery held it, the
// RTO held it, and nothing armed the RTO again (docs/tcp-model.md).

// Drops, on the client's receive side, the first copy of the server's second data segment shorter
// than a full one: the first is the response head, written alone; the second ends the body.
class DropTheFirstCopyOfTheTail : public ns3::ErrorModel {
 public:
  bool dropped() const { return dropped_; }

 private:
  bool DoCorrupt(ns3::Ptr<ns3::Packet> p) override {
    if (dropped_) return false;
    auto copy = p->Copy();
    ns3::PppHeader ppp;
    ns3::Ipv4Header ip;
    ns3::TcpHeader tcp;
    copy->RemoveHeader(ppp);
    copy->RemoveHeader(ip);
    copy->RemoveHeader(tcp);
    const std::uint32_t payload = copy->GetSize();
    if (tcp.GetSourcePort() != SimNetwork::kServerPort || payload == 0 || payload >= 1448)
      return false;
    if (!head_) {
      head_ = tcp.GetSequenceNumber();
      return false;
    }
    if (tcp.GetSequenceNumber() == *head_) return false;
    dropped_ = true;
    return true;
  }
  void DoReset() override {}

  std::optional<ns3::SequenceNumber32> head_;
  bool dropped_ = false;
};

// Request -> last body byte of one download on a fresh connection, with the tail's first copy
// dropped or not.
double fresh_download_ms(const twinbench::Network& n, std::uint64_t bytes, bool drop_tail,
                         std::uint64_t* retransmission_timeouts = nullptr) {
  Bench b(n);
  auto drop = ns3::CreateObject<DropTheFirstCopyOfTheTail>();
  if (drop_tail) {
    ns3::Ptr<ns3::Node> client = b.net().client_node();
    for (std::uint32_t i = 0; i < client->GetNDevices(); ++i) {
      if (auto device = ns3::DynamicCast<ns3::PointToPointNetDevice>(client->GetDevice(i)))
        device->SetReceiveErrorModel(drop);
    }
  }
  b.connect();
  const double ms = b.get(download(bytes));
  EXPECT_EQ(b.body_bytes(), bytes);
  EXPECT_EQ(drop->dropped(), drop_tail);
  if (retransmission_timeouts) *retransmission_timeouts = b.net().server_retransmission_timeouts();
  return ms;
}

TEST(SimTailLoss, ALostPartialLastSegmentIsResentDespiteNagle) {
  // 1 MiB = 724 full segments + 224 bytes, after the head. Nothing follows the lost tail, so no
  // duplicate ACK reports it: the RTO resends it (the model has no tail loss probe). The loss
  // costs at least TCP_RTO_MIN (200 ms) and, once resent, half a round trip more than the tail
  // would have taken; an RTO doubled even once (400 ms) would mean the first went unanswered.
  const auto n = path();  // CUBIC server, Nagle on
  std::uint64_t timeouts_lossless = 0, timeouts_lossy = 0;
  const double lossless = fresh_download_ms(n, 1 << 20, false, &timeouts_lossless);
  const double lossy = fresh_download_ms(n, 1 << 20, true, &timeouts_lossy);
  EXPECT_EQ(timeouts_lossless, 0u);
  EXPECT_EQ(timeouts_lossy, 1u);  // the RTO that resends the tail
  EXPECT_GT(lossy - lossless, 200) << lossless << " -> " << lossy;
  EXPECT_LT(lossy - lossless, 400) << lossless << " -> " << lossy;
}

TEST(SimTailLoss, BbrServerWithNagleFinishesAnEightMibDownloadOnALongFatPath) {
  // The compare grid's 100 ms, 100 Mbit/s BBR cells (8 MiB): BBR's startup overshoots the one-BDP
  // queue, which drops the tail among hundreds of segments; the download used to stall for good.
  // It takes the request's round trip plus the body's wire time, plus startup and the recovery
  // of that loss: a few round trips.
  auto n = path(50);
  n.mutable_link()->set_uplink_mbps(20);
  n.mutable_server_tcp()->set_congestion_control(twinbench::BBR);  // paced; Nagle on
  const std::uint64_t bytes = 8u << 20;
  const double rtt = 100;
  const double ms = fresh_download_ms(n, bytes, false);
  EXPECT_GT(ms, rtt + wire_ms(bytes));
  EXPECT_LT(ms, rtt + wire_ms(bytes) + 10 * rtt) << ms;
}

TEST(SimTailLoss, RecoveryFromAStartupOvershootNeedsNoRetransmissionTimeout) {
  // 100 ms, 20 Mbit/s, BBR: startup overshoots the one-BDP queue and a tenth of the flight is
  // dropped; retransmissions are dropped too and RACK resends them. Linux re-arms the RTO each
  // time it resends the head (tcp_xmit_retransmit_queue), so the timer never runs out while RACK
  // is still resending; ns-3 arms it only when none runs, and it fired once per download.
  auto n = path(50, 20);
  n.mutable_server_tcp()->set_congestion_control(twinbench::BBR);  // paced; Nagle on
  Bench b(n);
  b.connect();
  const double ms = b.get(download(8u << 20));
  EXPECT_EQ(b.body_bytes(), 8u << 20);
  EXPECT_EQ(b.net().server_retransmission_timeouts(), 0u) << ms;
}

}  // namespace
}  // namespace tb::sim
