#pragma once
// An ns-3 TCP socket with the Linux behaviour ns-3.37 lacks (docs/tcp-model.md):
// - slow-start-after-idle (tcp_slow_start_after_idle_check / tcp_cwnd_restart), not under BBR,
//   timed by Linux's RTO formula, srtt + max(4 rttvar, rto_min) (set in create_tcp_socket);
// - Nagle with Minshall's variant (tcp_nagle_check): a partial segment waits only while an
//   earlier partial segment is unacknowledged, and only new data waits (never a retransmission);
// - every Send() pushes at once, as each send() syscall does (ns-3 defers to the next time step,
//   which merges writes made in one event). So Send() must not be called from inside this
//   socket's callbacks (the send callback runs inside the transmit loop): defer with ScheduleNow;
// - delivery-rate samples as Linux takes them (DeliveryRateEstimator, for BBR), RACK's detection
//   of lost retransmissions, no BBR PROBE_RTT on idle keep-alive connections, and no zero-length
//   segment when the peer's window is exactly full (docs/tcp-model.md);
// - a window update when the application's read opens the receive window significantly
//   (tcp_cleanup_rbuf); ns-3 only reports the larger window on the next outgoing segment;
// - Linux's receive-side ACK decision instead of ns-3's "every DelAckCount-th segment, else after
//   DelAckTimeout": quick-ACK mode (icsk_ack.quick), the pingpong (interactive) heuristic, the
//   adaptive delayed-ACK timeout (icsk_ack.ato), "more than one receive MSS unacknowledged", and
//   the ACK on a read that drains a pushed small segment (__tcp_ack_snd_check,
//   tcp_event_data_recv, tcp_event_data_sent, tcp_delack_timer_handler, tcp_cleanup_rbuf).
//
// And one change of cost, not of behaviour: in-order data leaves ns-3's TcpRxBuffer as soon as it
// arrives (see take_in_order_data), so a slow reader does not make every arriving segment walk
// the unread data.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>

#include <ns3/event-id.h>
#include <ns3/node.h>
#include <ns3/tcp-socket-base.h>

#include "twinbench/scenario/network.hpp"

namespace tb::sim {

class LinuxTcpSocket : public ns3::TcpSocketBase {
 public:
  LinuxTcpSocket() = default;
  LinuxTcpSocket(const LinuxTcpSocket&) = default;  // what Fork() copies for an accepted socket
  ~LinuxTcpSocket() override;

  int Send(ns3::Ptr<ns3::Packet> p, uint32_t flags) override;
  ns3::Ptr<ns3::Packet> Recv(uint32_t max_size, uint32_t flags) override;
  // Like Recv, into `out`: the bytes read (0: none unread).
  std::size_t read(std::span<std::byte> out);
  uint32_t GetRxAvailable() const override;
  int Close() override;

  // Expiries of the retransmission timer on this connection, backed-off ones included.
  std::uint64_t retransmission_timeouts() const { return retransmission_timeouts_; }
  std::uint32_t congestion_window() const { return m_tcb->m_cWnd.Get(); }
  std::uint32_t slow_start_threshold() const { return m_tcb->m_ssThresh.Get(); }

 protected:
  ns3::Ptr<ns3::TcpSocketBase> Fork() override;
  uint32_t SendDataPacket(ns3::SequenceNumber32 seq, uint32_t max_size, bool with_ack) override;
  void SendEmptyPacket(uint8_t flags) override;
  void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) override;
  void ReceivedData(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) override;
  void DelAckTimeout() override;
  void ReTxTimeout() override;
  void EstimateRtt(const ns3::TcpHeader& header) override;
  uint32_t GetRcvBufSize() const override;

 private:
  friend ns3::Ptr<LinuxTcpSocket> create_tcp_socket(ns3::Ptr<ns3::Node>,
                                                    const scenario::ResolvedTcp&, std::uint32_t,
                                                    std::int64_t);
  void restart_window_if_idle();
  void cleanup_after_read(std::uint32_t copied);
  void count_short_segments_as_packets(ns3::SequenceNumber32 ack);
  void detect_lost_retransmissions();
  ns3::Time ack_rtt(ns3::SequenceNumber32 ack) const;
  ns3::Time ack_rtt_;  // the RTT of the ACK being processed (LinuxCubic's HyStart); zero: none
  void forget_sacked_retransmissions(const ns3::TcpHeader& header);
  uint32_t window_for_new_data() const;  // NextSeg's rule 2: peer's window and Nagle
  void take_in_order_data();
  bool take_next_segment(ns3::Ptr<ns3::Packet> packet, ns3::SequenceNumber32 seq);
  std::uint32_t receive_buffer_capacity() const;  // the RcvBufSize, whatever has been taken out
  std::uint32_t receive_buffer_used() const;      // unread plus out-of-order bytes

  // Receive-side ACK state, Linux's icsk_ack (include/net/inet_connection_sock.h).
  struct AckState {
    std::uint32_t quick = 0;     // quick-ACKs left (icsk_ack.quick)
    std::uint32_t pingpong = 0;  // replies sent within ato of receiving (icsk_ack.pingpong)
    ns3::Time ato;               // delayed-ACK timeout estimate; zero until the first data
    ns3::Time lrcvtime;          // when data was last received
    bool scheduled = false;      // an ACK is owed (ICSK_ACK_SCHED)
    bool pushed = false;         // a small (pushed) segment arrived (ICSK_ACK_PUSHED)
    bool pushed2 = false;        // ... two of them (ICSK_ACK_PUSHED2)
    ns3::Time timeout;           // when the pending delayed-ACK timer fires (icsk_ack.timeout)
    std::uint32_t rcv_mss =
        536;  // estimate of the peer's MSS (tcp_initialize_rcv_mss: TCP_MIN_RCVMSS)
    std::uint32_t last_seg_size = 0;
    ns3::SequenceNumber32 rcv_wup;  // rcv_nxt when we last sent a segment (tp->rcv_wup)
  };
  void on_data_received(std::uint32_t bytes);  // tcp_event_data_recv
  void measure_rcv_mss(std::uint32_t bytes);   // tcp_measure_rcv_mss
  void incr_quickack();                        // tcp_incr_quickack(sk, TCP_MAX_QUICKACKS)
  void enter_quickack_mode();                  // tcp_enter_quickack_mode
  bool in_quickack_mode() const { return ack_.quick > 0 && !in_pingpong_mode(); }
  bool in_pingpong_mode() const { return ack_.pingpong >= kPingpongThresh; }
  void ack_send_check();    // __tcp_ack_snd_check for in-order data
  void send_delayed_ack();  // tcp_send_delayed_ack
  void send_ack();
  void on_ack_sent();   // tcp_event_ack_sent + tcp_select_window's rcv_wup
  void on_data_sent();  // tcp_event_data_sent's pingpong count

  static constexpr std::uint32_t kMaxQuickAcks = 16;   // TCP_MAX_QUICKACKS
  static constexpr std::uint32_t kPingpongThresh = 1;  // net.ipv4.tcp_pingpong_thresh default

  bool nagle_ = true;
  bool slow_start_after_idle_ = true;
  std::uint64_t retransmission_timeouts_ = 0;
  bool has_sent_data_ = false;
  ns3::Time last_data_sent_;                 // Linux tp->lsndtime
  bool small_segment_outstanding_ = false;   // Linux snd_sml is after snd_una
  ns3::SequenceNumber32 small_segment_end_;  // Linux tp->snd_sml
  // New segments sent shorter than the MSS: end sequence -> bytes short of a full segment.
  std::map<ns3::SequenceNumber32, std::uint32_t> short_segments_;
  ns3::SequenceNumber32 advertised_right_edge_;  // last ACK number + window we advertised
  ns3::Time last_ack_received_;                  // when an ACK last arrived
  std::map<ns3::SequenceNumber32, ns3::Time> retransmitted_at_;  // unacknowledged retransmissions
  ns3::EventId reorder_timer_;  // RACK's reordering timer (tcp_rack_reo_timeout)
  ns3::Time reorder_deadline_;  // ... and when it fires
  AckState ack_;
  // Unread in-order data taken out of m_rxBuffer, whose capacity is lowered by as many bytes.
  std::deque<ns3::Ptr<ns3::Packet>> unread_;
  std::uint32_t unread_bytes_ = 0;
};

// A socket on `node` configured with `tcp` for a path of `mtu_bytes`, like TcpL4Protocol's
// CreateSocket but of this class. `stream` fixes the random stream of congestion controls that
// draw random numbers (BBR's gain cycle phase), for determinism.
ns3::Ptr<LinuxTcpSocket> create_tcp_socket(ns3::Ptr<ns3::Node> node,
                                           const scenario::ResolvedTcp& tcp,
                                           std::uint32_t mtu_bytes, std::int64_t stream);

}  // namespace tb::sim
