#pragma once
// An ns-3 TCP socket with the Linux behaviour ns-3.37 lacks (docs/tcp-model.md):
// - slow-start-after-idle (tcp_slow_start_after_idle_check / tcp_cwnd_restart), not under BBR;
// - Nagle with Minshall's variant (tcp_nagle_check): a partial segment waits only while an
//   earlier partial segment is unacknowledged;
// - every Send() pushes at once, as each send() syscall does (ns-3 defers to the next time step,
//   which merges writes made in one event). So Send() must not be called from inside this
//   socket's callbacks (the send callback runs inside the transmit loop): defer with ScheduleNow;
// - a window update when the application's read opens the receive window significantly
//   (tcp_cleanup_rbuf); ns-3 only reports the larger window on the next outgoing segment.
#include <cstdint>

#include <ns3/node.h>
#include <ns3/tcp-socket-base.h>

#include "twinbench/sim/tcp_config.hpp"

namespace tb::sim {

class LinuxTcpSocket : public ns3::TcpSocketBase {
 public:
  LinuxTcpSocket() = default;
  LinuxTcpSocket(const LinuxTcpSocket&) = default;  // what Fork() copies for an accepted socket

  int Send(ns3::Ptr<ns3::Packet> p, uint32_t flags) override;
  ns3::Ptr<ns3::Packet> Recv(uint32_t max_size, uint32_t flags) override;

  std::uint32_t congestion_window() const { return m_tcb->m_cWnd.Get(); }
  std::uint32_t slow_start_threshold() const { return m_tcb->m_ssThresh.Get(); }

 protected:
  ns3::Ptr<ns3::TcpSocketBase> Fork() override;
  uint32_t SendDataPacket(ns3::SequenceNumber32 seq, uint32_t max_size, bool with_ack) override;
  void SendEmptyPacket(uint8_t flags) override;
  void ReceivedAck(ns3::Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) override;

 private:
  friend ns3::Ptr<LinuxTcpSocket> create_tcp_socket(ns3::Ptr<ns3::Node>, const ResolvedTcp&, std::uint32_t,
                                                    std::int64_t);
  void restart_window_if_idle();
  void send_window_update_if_opened();
  void set_small_segment_outstanding(bool outstanding);

  bool nagle_ = true;
  bool slow_start_after_idle_ = true;
  bool has_sent_data_ = false;
  ns3::Time last_data_sent_;                 // Linux tp->lsndtime
  bool small_segment_outstanding_ = false;   // Linux snd_sml is after snd_una
  ns3::SequenceNumber32 small_segment_end_;  // Linux tp->snd_sml
  ns3::SequenceNumber32 advertised_right_edge_;  // last ACK number + window we advertised
};

// A socket on `node` configured with `tcp` for a path of `mtu_bytes`, like TcpL4Protocol's
// CreateSocket but of this class. `stream` fixes the random stream of congestion controls that
// draw random numbers (BBR's gain cycle phase), for determinism.
ns3::Ptr<LinuxTcpSocket> create_tcp_socket(ns3::Ptr<ns3::Node> node, const ResolvedTcp& tcp, std::uint32_t mtu_bytes,
                                           std::int64_t stream);

}  // namespace tb::sim
