#include "twinbench/sim/linux_tcp_socket.hpp"

#include <ns3/boolean.h>
#include <ns3/nstime.h>
#include <ns3/object-factory.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>
#include <ns3/rtt-estimator.h>
#include <ns3/tcp-bbr.h>
#include <ns3/tcp-congestion-ops.h>
#include <ns3/tcp-cubic.h>
#include <ns3/tcp-l4-protocol.h>
#include <ns3/tcp-prr-recovery.h>
#include <ns3/tcp-rx-buffer.h>
#include <ns3/tcp-tx-buffer.h>

#include <algorithm>

namespace tb::sim {

using ns3::Ptr;
using ns3::SequenceNumber32;
using ns3::TcpSocketState;

int LinuxTcpSocket::Send(Ptr<ns3::Packet> p, uint32_t flags) {
  restart_window_if_idle();
  const int accepted = TcpSocketBase::Send(p, flags);
  if (accepted > 0 && (m_state == ESTABLISHED || m_state == CLOSE_WAIT)) SendPendingData(m_connected);
  return accepted;
}

Ptr<ns3::Packet> LinuxTcpSocket::Recv(uint32_t max_size, uint32_t flags) {
  Ptr<ns3::Packet> p = TcpSocketBase::Recv(max_size, flags);
  if (p && p->GetSize() > 0) send_window_update_if_opened();
  return p;
}

Ptr<ns3::TcpSocketBase> LinuxTcpSocket::Fork() { return ns3::CopyObject<LinuxTcpSocket>(this); }

uint32_t LinuxTcpSocket::SendDataPacket(SequenceNumber32 seq, uint32_t max_size, bool with_ack) {
  const bool new_data = seq >= m_tcb->m_highTxMark.Get();
  const uint32_t size = TcpSocketBase::SendDataPacket(seq, max_size, with_ack);
  if (new_data && size < m_tcb->m_segmentSize) {
    small_segment_end_ = seq + size;
    set_small_segment_outstanding(true);
  }
  has_sent_data_ = true;
  last_data_sent_ = ns3::Simulator::Now();
  advertised_right_edge_ = m_tcb->m_rxBuffer->MaxRxSequence();
  return size;
}

void LinuxTcpSocket::SendEmptyPacket(uint8_t flags) {
  TcpSocketBase::SendEmptyPacket(flags);
  advertised_right_edge_ = m_tcb->m_rxBuffer->MaxRxSequence();
}

void LinuxTcpSocket::ReceivedAck(Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) {
  // Before the base class acts on the ACK, which ends by sending pending data.
  if (small_segment_outstanding_ && header.GetAckNumber() >= small_segment_end_) set_small_segment_outstanding(false);
  TcpSocketBase::ReceivedAck(packet, header);
}

void LinuxTcpSocket::set_small_segment_outstanding(bool outstanding) {
  small_segment_outstanding_ = outstanding;
  // ns-3 holds every partial segment while data is unacknowledged unless m_noDelay; switching it
  // with the Minshall condition yields Linux's rule.
  m_noDelay = !(nagle_ && outstanding);
}

// Linux tcp_slow_start_after_idle_check + tcp_cwnd_restart (net/ipv4/tcp_output.c), on a write
// like tcp_skb_entail. Congestion controls that own the window (BBR: HasCongControl, Linux
// cong_control) handle idle themselves.
void LinuxTcpSocket::restart_window_if_idle() {
  if (!slow_start_after_idle_ || !has_sent_data_ || m_congestionControl->HasCongControl() || UnAckDataCount() > 0)
    return;
  const ns3::Time rto = m_rto.Get();
  std::int64_t idle = (ns3::Simulator::Now() - last_data_sent_).GetNanoSeconds();
  if (idle <= rto.GetNanoSeconds()) return;

  m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_CWND_RESTART);
  std::uint32_t cwnd = m_tcb->m_cWnd.Get();
  const std::uint32_t restart = std::min(m_tcb->m_initialCWnd * m_tcb->m_segmentSize, cwnd);
  // tcp_current_ssthresh: keep ssthresh in CWR/recovery, else at least 3/4 of cwnd.
  if (m_tcb->m_congState != TcpSocketState::CA_CWR && m_tcb->m_congState != TcpSocketState::CA_RECOVERY)
    m_tcb->m_ssThresh = std::max(m_tcb->m_ssThresh.Get(), (cwnd >> 1) + (cwnd >> 2));
  while ((idle -= rto.GetNanoSeconds()) > 0 && cwnd > restart) cwnd >>= 1;
  m_tcb->m_cWnd = std::max(cwnd, restart);
  m_tcb->m_cWndInfl = m_tcb->m_cWnd.Get();
}

// Linux tcp_cleanup_rbuf: after a read, ACK at once if the window we could advertise now is at
// least twice what remains of the last advertised one, and that remainder is at most half the
// maximum window. Not once the peer has finished sending.
void LinuxTcpSocket::send_window_update_if_opened() {
  const auto& rx = *m_tcb->m_rxBuffer;
  if (rx.GotFin() || (m_state != ESTABLISHED && m_state != FIN_WAIT_1 && m_state != FIN_WAIT_2)) return;
  const std::int64_t remaining = std::max<std::int64_t>(advertised_right_edge_ - rx.NextRxSequence(), 0);
  if (2 * remaining > rx.MaxBufferSize()) return;
  const std::int64_t now_open = rx.MaxRxSequence() - rx.NextRxSequence();
  if (now_open > 0 && now_open >= 2 * remaining) SendEmptyPacket(ns3::TcpHeader::ACK);
}

namespace {

ns3::TypeId congestion_type(CongestionControl cc) {
  switch (cc) {
    case CongestionControl::kBbr: return ns3::TcpBbr::GetTypeId();
    case CongestionControl::kNewReno: return ns3::TcpNewReno::GetTypeId();
    case CongestionControl::kCubic: break;
  }
  return ns3::TcpCubic::GetTypeId();
}

}  // namespace

Ptr<LinuxTcpSocket> create_tcp_socket(Ptr<ns3::Node> node, const ResolvedTcp& tcp, std::uint32_t mtu_bytes,
                                      std::int64_t stream) {
  auto socket = ns3::CreateObject<LinuxTcpSocket>();
  ns3::ObjectFactory factory(congestion_type(tcp.congestion_control).GetName());
  auto congestion = factory.Create<ns3::TcpCongestionOps>();
  if (auto bbr = ns3::DynamicCast<ns3::TcpBbr>(congestion)) bbr->SetStream(static_cast<uint32_t>(stream));

  socket->SetNode(node);
  socket->SetTcp(node->GetObject<ns3::TcpL4Protocol>());
  socket->SetRtt(ns3::CreateObject<ns3::RttMeanDeviation>());
  socket->SetCongestionControlAlgorithm(congestion);
  socket->SetRecoveryAlgorithm(ns3::CreateObject<ns3::TcpPrrRecovery>());

  const ns3::Time min_rto = ns3::MicroSeconds(static_cast<std::int64_t>(tcp.min_rto_ms * 1000));
  socket->SetAttribute("SegmentSize", ns3::UintegerValue(tcp.segment_size(mtu_bytes)));
  socket->SetAttribute("InitialCwnd", ns3::UintegerValue(tcp.initial_cwnd_segments));
  socket->SetAttribute("SndBufSize", ns3::UintegerValue(tcp.send_buffer_bytes));
  socket->SetAttribute("RcvBufSize", ns3::UintegerValue(tcp.receive_buffer_bytes));
  socket->SetAttribute("DelAckTimeout",
                       ns3::TimeValue(ns3::MicroSeconds(static_cast<std::int64_t>(tcp.delayed_ack_ms * 1000))));
  socket->SetAttribute("DelAckCount", ns3::UintegerValue(2));  // Linux ACKs every second full segment
  socket->SetAttribute("MinRto", ns3::TimeValue(min_rto));
  socket->SetAttribute("ConnTimeout", ns3::TimeValue(ns3::Seconds(1)));  // Linux TCP_TIMEOUT_INIT (SYN RTO)
  socket->SetAttribute("PersistTimeout", ns3::TimeValue(min_rto));       // Linux probes a zero window at the RTO
  socket->SetAttribute("Sack", ns3::BooleanValue(tcp.sack));
  socket->SetAttribute("Timestamp", ns3::BooleanValue(tcp.timestamps));
  socket->SetPacingStatus(tcp.pacing);
  socket->nagle_ = !tcp.nodelay;
  socket->set_small_segment_outstanding(false);
  socket->slow_start_after_idle_ = tcp.slow_start_after_idle;
  return socket;
}

}  // namespace tb::sim
