#pragma once
// ns-3's CUBIC with Linux's HyStart (net/ipv4/tcp_cubic.c: cubictcp_acked, hystart_update) in
// place of ns-3.37's, which decides differently when a fresh connection leaves slow start:
// - the delay test: Linux leaves once a round's smallest RTT exceeds delay_min plus
//   clamp(delay_min / 8, 4 ms, 16 ms); ns-3 adds clamp(delay_min, 4 ms, 1 s), so on a 100 ms path
//   it waits for the RTT to double, overshoots the queue and loses a window's worth;
// - the ACK-train test: Linux's threshold is delay_min / 2 for an unpaced flow; ns-3's delay_min;
// - the samples: Linux takes each ACK's RTT (of the newest segment it acknowledges, none when it
//   acknowledges a retransmission); ns-3 passes its smoothed RTT, which trails a growing queue.
// The cubic window growth itself stays ns-3's.
#include <cstdint>

#include <ns3/tcp-cubic.h>

namespace tb::sim {

class LinuxCubic : public ns3::TcpCubic {
 public:
  static ns3::TypeId GetTypeId();
  LinuxCubic();
  LinuxCubic(const LinuxCubic&) = default;

  // ns-3's own HyStart must be off (attribute HyStart=false): create_tcp_socket sets it.
  void PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segments_acked,
                 const ns3::Time& rtt) override;
  void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                          const ns3::TcpSocketState::TcpCongState_t state) override;
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override;

  // The RTT of the ACK about to be processed (LinuxTcpSocket measures it before ns-3 calls
  // PktsAcked); zero: the ACK gives no sample.
  void set_ack_rtt(ns3::Time rtt) { ack_rtt_ = rtt; }

 private:
  void hystart_reset(const ns3::TcpSocketState& tcb);
  void hystart_update(ns3::TcpSocketState& tcb, ns3::Time delay);

  ns3::Time ack_rtt_;
  ns3::Time delay_min_;            // the smallest per-ACK RTT (ca->delay_min); zero: none yet
  bool found_ = false;             // slow start left by HyStart (ca->found)
  bool round_started_ = false;     // a round is being timed (set at the first sample)
  ns3::Time round_start_;          // ca->round_start
  ns3::Time last_ack_;             // ca->last_ack: the ACK train's last ACK
  ns3::SequenceNumber32 end_seq_;  // the round ends when this is acknowledged (ca->end_seq)
  ns3::Time curr_rtt_;             // the round's smallest RTT (ca->curr_rtt)
  std::uint32_t sample_count_ = 0;
};

}  // namespace tb::sim
