// SPDX-License-Identifier: GPL-2.0-only
// Reimplements parts of ns-3.37's TcpSocketBase (src/internet/model/tcp-socket-base.cc),
// which is GPL-2.0-only (LICENSE).
#include "twinbench/sim/linux_tcp_socket.hpp"

#include "twinbench/sim/linux_cubic.hpp"

#include "twinbench/sim/delivery_rate.hpp"
#include "twinbench/sim/linux_bbr.hpp"

#include <ns3/abort.h>
#include <ns3/boolean.h>
#include <ns3/double.h>
#include <ns3/nstime.h>
#include <ns3/object-factory.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>
#include <ns3/rtt-estimator.h>
#include <ns3/tcp-bbr.h>
#include <ns3/tcp-congestion-ops.h>
#include <ns3/tcp-cubic.h>
#include <ns3/tcp-l4-protocol.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/tcp-prr-recovery.h>
#include <ns3/tcp-rx-buffer.h>
#include <ns3/tcp-tx-buffer.h>

#include <algorithm>
#include <memory>

namespace tb::sim {

using ns3::Ptr;
using ns3::SequenceNumber32;
using ns3::TcpSocketState;

LinuxTcpSocket::~LinuxTcpSocket() { reorder_timer_.Cancel(); }

int LinuxTcpSocket::Send(Ptr<ns3::Packet> p, uint32_t flags) {
  restart_window_if_idle();
  const int accepted = TcpSocketBase::Send(p, flags);
  if (accepted > 0 && (m_state == ESTABLISHED || m_state == CLOSE_WAIT))
    SendPendingData(m_connected);
  return accepted;
}

// Copies unread data straight into `out`, one copy per byte (Recv would first gather it into a
// packet), then acts on the read as Linux does.
std::size_t LinuxTcpSocket::read(std::span<std::byte> out) {
  const auto size = static_cast<uint32_t>(std::min<std::size_t>(out.size(), unread_bytes_));
  if (size == 0) return 0;
  uint32_t copied = 0;
  while (copied < size) {
    Ptr<ns3::Packet>& head = unread_.front();
    const uint32_t n = std::min(head->GetSize(), size - copied);
    head->CopyData(reinterpret_cast<uint8_t*>(out.data() + copied), n);
    copied += n;
    if (n == head->GetSize()) {
      unread_.pop_front();
    } else {
      head = head->CreateFragment(n, head->GetSize() - n);
    }
  }
  unread_bytes_ -= size;
  m_tcb->m_rxBuffer->SetMaxBufferSize(m_tcb->m_rxBuffer->MaxBufferSize() + size);
  cleanup_after_read(size);
  return size;
}

// TcpSocketBase::Recv, reading what take_in_order_data took out of the receive buffer.
Ptr<ns3::Packet> LinuxTcpSocket::Recv(uint32_t max_size, uint32_t flags) {
  NS_ABORT_MSG_IF(flags, "use of flags is not supported in LinuxTcpSocket::Recv()");
  if (receive_buffer_used() == 0 && m_state == CLOSE_WAIT)
    return ns3::Create<ns3::Packet>();  // EOF
  const uint32_t size = std::min(max_size, unread_bytes_);
  if (size == 0) return nullptr;
  const auto data = std::make_unique_for_overwrite<std::byte[]>(size);  // read() fills all of it
  read(std::span(data.get(), size));
  return ns3::Create<ns3::Packet>(reinterpret_cast<const uint8_t*>(data.get()), size);
}

uint32_t LinuxTcpSocket::GetRxAvailable() const {
  return unread_bytes_ + m_tcb->m_rxBuffer->Available();
}

// TcpSocketBase::Close resets the connection when unread data remains; so does this one when the
// unread data is here.
int LinuxTcpSocket::Close() {
  if (unread_bytes_ > 0) {
    SendRST();
    return 0;
  }
  return TcpSocketBase::Close();
}

uint32_t LinuxTcpSocket::GetRcvBufSize() const { return receive_buffer_capacity(); }

// ns-3's TcpRxBuffer keeps unread in-order data in the map that holds out-of-order segments, and
// Add walks that map from its start for every arriving segment: with a reader slower than the
// link, each segment costs as much as the unread data. Taking in-order data out at once, and
// lowering the buffer's capacity by as many bytes, leaves the map with out-of-order data only and
// every window ns-3 computes unchanged: MaxRxSequence (the right edge offered) is NextRxSequence
// plus capacity, which is the first unread byte plus RcvBufSize either way.
//
// Taken a segment's worth at a time: Extract appends each stored packet to the packet it returns,
// which reallocates and copies what it holds, so taking all the data a filled hole releases (up to
// a window of out-of-order segments) in one piece would cost its size squared.
void LinuxTcpSocket::take_in_order_data() {
  auto& rx = *m_tcb->m_rxBuffer;
  while (rx.Available() > 0) {
    Ptr<ns3::Packet> data = rx.Extract(std::min(rx.Available(), m_tcb->m_segmentSize));
    unread_bytes_ += data->GetSize();
    rx.SetMaxBufferSize(rx.MaxBufferSize() - data->GetSize());
    unread_.push_back(std::move(data));
  }
}

// The common case, the next segment in order while nothing is held out of order: does what Add
// then take_in_order_data would, without Extract copying the payload into a new packet. Add stores
// such a segment whole and only advances NextRxSequence. A FIN known beyond it (MaxRxSequence is
// then the FIN's) or a segment as large as the buffer takes the general path.
bool LinuxTcpSocket::take_next_segment(Ptr<ns3::Packet> packet, SequenceNumber32 seq) {
  auto& rx = *m_tcb->m_rxBuffer;
  const uint32_t size = packet->GetSize();
  const SequenceNumber32 next = rx.NextRxSequence();
  if (size == 0 || seq != next || rx.Size() != 0 || size >= rx.MaxBufferSize() ||
      rx.MaxRxSequence() != next + SequenceNumber32(rx.MaxBufferSize())) {
    return false;
  }
  rx.SetNextRxSequence(next + SequenceNumber32(size));
  unread_bytes_ += size;
  rx.SetMaxBufferSize(rx.MaxBufferSize() - size);
  unread_.push_back(packet->Copy());
  return true;
}

std::uint32_t LinuxTcpSocket::receive_buffer_capacity() const {
  return m_tcb->m_rxBuffer->MaxBufferSize() + unread_bytes_;
}

std::uint32_t LinuxTcpSocket::receive_buffer_used() const {
  return m_tcb->m_rxBuffer->Size() + unread_bytes_;
}

Ptr<ns3::TcpSocketBase> LinuxTcpSocket::Fork() {
  auto copy = ns3::CopyObject<LinuxTcpSocket>(this);
  copy->m_rateOps =
      ns3::CreateObject<DeliveryRateEstimator>();  // the base copy made a TcpRateLinux
  copy->m_txBuffer->SetRWndCallback(
      ns3::MakeCallback(&LinuxTcpSocket::window_for_new_data, ns3::PeekPointer(copy)));
  return copy;
}

uint32_t LinuxTcpSocket::SendDataPacket(SequenceNumber32 seq, uint32_t max_size, bool with_ack) {
  const bool new_data = seq >= m_tcb->m_highTxMark.Get();
  const uint32_t size = TcpSocketBase::SendDataPacket(seq, max_size, with_ack);
  if (!new_data) retransmitted_at_[seq] = ns3::Simulator::Now();
  // Linux re-arms the RTO when it retransmits the head (tcp_xmit_retransmit_queue, skb ==
  // rtx_head), so the timer runs from the head's latest copy; ns-3 arms it only when none is
  // running, and the timer started at an earlier ACK fired while RACK still had time to resend.
  if (!new_data && seq == m_txBuffer->HeadSequence() && m_retxEvent.IsRunning()) {
    m_retxEvent.Cancel();
    m_retxEvent = ns3::Simulator::Schedule(m_rto, &LinuxTcpSocket::ReTxTimeout, this);
  }
  if (new_data && size < m_tcb->m_segmentSize) {
    small_segment_end_ = seq + size;
    small_segment_outstanding_ = true;
    short_segments_[seq + size] = m_tcb->m_segmentSize - size;
  }
  if (with_ack) on_ack_sent();
  on_data_sent();
  has_sent_data_ = true;
  last_data_sent_ = ns3::Simulator::Now();
  advertised_right_edge_ = m_tcb->m_rxBuffer->MaxRxSequence();
  return size;
}

void LinuxTcpSocket::ReTxTimeout() {
  ++retransmission_timeouts_;
  TcpSocketBase::ReTxTimeout();
}

void LinuxTcpSocket::SendEmptyPacket(uint8_t flags) {
  TcpSocketBase::SendEmptyPacket(flags);
  if (flags & ns3::TcpHeader::ACK) on_ack_sent();
  advertised_right_edge_ = m_tcb->m_rxBuffer->MaxRxSequence();
}

void LinuxTcpSocket::ReceivedAck(Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) {
  // Before the base class acts on the ACK, which ends by sending pending data.
  if (small_segment_outstanding_ && header.GetAckNumber() >= small_segment_end_)
    small_segment_outstanding_ = false;
  forget_sacked_retransmissions(header);
  count_short_segments_as_packets(header.GetAckNumber());
  if (auto cubic = ns3::DynamicCast<LinuxCubic>(m_congestionControl)) cubic->set_ack_rtt(ack_rtt_);
  ack_rtt_ = ns3::Time();
  TcpSocketBase::ReceivedAck(packet, header);
  last_ack_received_ = ns3::Simulator::Now();
  detect_lost_retransmissions();
}

// ns-3 measures (and forgets the send times of what an ACK acknowledges) before ReceivedAck.
void LinuxTcpSocket::EstimateRtt(const ns3::TcpHeader& header) {
  ack_rtt_ = ack_rtt(header.GetAckNumber());
  TcpSocketBase::EstimateRtt(header);
}

// Linux's per-ACK RTT (tcp_clean_rtx_queue's ca_rtt_us): from the send time of the newest segment
// this ACK acknowledges, none if it acknowledges a retransmission (Karn) or nothing new. ns-3 only
// hands the congestion control its smoothed RTT.
ns3::Time LinuxTcpSocket::ack_rtt(ns3::SequenceNumber32 ack) const {
  ns3::Time newest_sent;
  for (const auto& h : m_history) {
    if (h.seq + ns3::SequenceNumber32(h.count) > ack) break;
    if (h.retx) return ns3::Time();
    newest_sent = h.time;
  }
  return newest_sent.IsZero() ? ns3::Time() : ns3::Simulator::Now() - newest_sent;
}

// RACK (RFC 8985, Linux tcp_rack_detect_loss) marks a segment lost once a segment sent after it
// has been delivered and an RTT plus a reordering window (min_rtt / 4) has passed since it was
// sent, retransmissions included. ns-3.37 marks a segment lost only once (RFC 6675 IsLost), so a
// dropped retransmission waits for the RTO, which resends the whole window from a cwnd of one.
// ns-3's scoreboard lets a subclass mark only the head lost or the whole un-SACKed flight
// (SetSentListLost), so when RACK finds a lost retransmission, or when nothing has been sent for an
// RTT plus the window while ACKs kept arriving (every un-SACKed segment is then past its
// deadline), the flight is marked lost: exact in the second case; in the first, segments sent
// within the last RTT are resent early (at most one window of duplicates, versus Linux).
void LinuxTcpSocket::detect_lost_retransmissions() {
  retransmitted_at_.erase(retransmitted_at_.begin(),
                          retransmitted_at_.lower_bound(m_txBuffer->HeadSequence()));
  if (m_tcb->m_congState != TcpSocketState::CA_RECOVERY || m_txBuffer->GetRetransmitsCount() == 0)
    return;
  const ns3::Time now = ns3::Simulator::Now();
  const ns3::Time reo_wnd = m_tcb->m_minRtt == ns3::Time::Max() ? ns3::Time() : m_tcb->m_minRtt / 4;
  const ns3::Time window = m_rtt->GetEstimate() + reo_wnd;
  // The send time of the newest segment delivered so far (RACK.xmit_ts).
  const ns3::Time newest_delivered = m_rateOps->GetConnectionRate().m_firstSentTime;
  ns3::Time next_check = ns3::Time::Max();
  bool lost = false;
  for (const auto& [seq, sent] : retransmitted_at_) {
    if (sent >= newest_delivered) continue;
    if (now >= sent + window) {
      lost = true;
      break;
    }
    next_check = std::min(next_check, sent + window);
  }
  if (!lost && m_txBuffer->BytesInFlight() > 0 && last_ack_received_ > last_data_sent_) {
    lost = now >= last_data_sent_ + window;
    next_check = std::min(next_check, last_data_sent_ + window);
  }
  if (lost) {
    m_txBuffer->SetSentListLost(false);
    retransmitted_at_.clear();
    SendPendingData(m_connected);
  } else if (next_check != ns3::Time::Max() &&
             (!reorder_timer_.IsRunning() || reorder_deadline_ != next_check)) {
    reorder_timer_.Cancel();
    reorder_deadline_ = next_check;
    // A raw pointer, as ns-3's own timers: a Ptr in the event would keep the socket alive through
    // its own EventId (a leak once the simulation ends first); the destructor cancels it.
    reorder_timer_ = ns3::Simulator::Schedule(next_check - now,
                                              &LinuxTcpSocket::detect_lost_retransmissions, this);
  }
}

// Retransmissions the receiver has SACKed are delivered, not candidates for RACK.
void LinuxTcpSocket::forget_sacked_retransmissions(const ns3::TcpHeader& header) {
  if (retransmitted_at_.empty() || !header.HasOption(ns3::TcpOption::SACK)) return;
  const auto sack =
      ns3::DynamicCast<const ns3::TcpOptionSack>(header.GetOption(ns3::TcpOption::SACK));
  for (const auto& [begin, end] : sack->GetSackList()) {
    retransmitted_at_.erase(retransmitted_at_.lower_bound(begin),
                            retransmitted_at_.lower_bound(end));
  }
}

// The new data NextSeg may offer (its rule 2, the only one that asks this callback; a value below
// the bytes already sent declines), decided as Linux's tcp_write_xmit decides for each new segment:
//
// - The peer's window (tcp_snd_wnd_test). ns-3's NextSeg offers new data while the bytes sent are
//   at most the peer's window, so with the window exactly full (possible in SACK recovery, where
//   in-flight excludes SACKed and lost bytes) it returns a zero-length segment, on which
//   SendDataPacket dereferences a null item. Reporting a full window as one byte short makes
//   NextSeg decline as Linux does.
// - Nagle with Minshall's rule (tcp_nagle_test, tcp_nagle_check, tcp_minshall_check): the last,
//   partial segment waits while data is unacknowledged and an earlier partial segment is (snd_sml
//   after snd_una). ns-3 makes its Nagle check in SendPendingData on whatever segment NextSeg
//   returned, retransmissions included, so a lost partial segment (a response's end) was never
//   resent: recovery and the RTO both held it, and since only a segment sent re-arms ns-3's RTO,
//   the connection stalled for good. Linux applies Nagle to new data only (tcp_retransmit_skb has
//   no such test), so ns-3's check is off (m_noDelay, create_tcp_socket) and Nagle is applied here.
uint32_t LinuxTcpSocket::window_for_new_data() const {
  const uint32_t sent = UnAckDataCount();  // ns-3's sent-list size: SND.NXT - SND.UNA
  const bool partial = m_txBuffer->SizeFromSequence(m_tcb->m_highTxMark) < m_tcb->m_segmentSize;
  if (nagle_ && small_segment_outstanding_ && sent > 0 && partial) return 0;  // below `sent`: held
  const uint32_t window = m_rWnd.Get();
  return window > 0 && window == sent ? window - 1 : window;
}

// Linux grows the window by packets acked (tcp_clean_rtx_queue's pkts_acked, tcp_slow_start,
// BBR's acked_sacked); ns-3 by bytes acked / MSS, carrying the remainder. A segment shorter than
// the MSS (a response head, a TLS record) therefore grew cwnd by one in Linux and by nothing in
// ns-3: on a fresh connection the head cost a segment in every round of slow start. Found by
// comparing with the kernel (docs/tcp-model.md, "Packets, not bytes"). Topping up the bytes ns-3
// carries makes a fully acked short segment count as one.
void LinuxTcpSocket::count_short_segments_as_packets(ns3::SequenceNumber32 ack) {
  auto end = short_segments_.begin();
  for (; end != short_segments_.end() && end->first <= ack; ++end)
    m_bytesAckedNotProcessed += end->second;
  short_segments_.erase(short_segments_.begin(), end);
}

// Linux tcp_slow_start_after_idle_check + tcp_cwnd_restart (net/ipv4/tcp_output.c), on a write
// like tcp_skb_entail. Congestion controls that own the window (BBR: HasCongControl, Linux
// cong_control) handle idle themselves.
void LinuxTcpSocket::restart_window_if_idle() {
  if (!slow_start_after_idle_ || !has_sent_data_ || m_congestionControl->HasCongControl() ||
      UnAckDataCount() > 0)
    return;
  const ns3::Time rto = m_rto.Get();
  std::int64_t idle = (ns3::Simulator::Now() - last_data_sent_).GetNanoSeconds();
  if (idle <= rto.GetNanoSeconds()) return;

  m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_CWND_RESTART);
  std::uint32_t cwnd = m_tcb->m_cWnd.Get();
  const std::uint32_t restart = std::min(m_tcb->m_initialCWnd * m_tcb->m_segmentSize, cwnd);
  // tcp_current_ssthresh: keep ssthresh in CWR/recovery, else at least 3/4 of cwnd.
  if (m_tcb->m_congState != TcpSocketState::CA_CWR &&
      m_tcb->m_congState != TcpSocketState::CA_RECOVERY)
    m_tcb->m_ssThresh = std::max(m_tcb->m_ssThresh.Get(), (cwnd >> 1) + (cwnd >> 2));
  while ((idle -= rto.GetNanoSeconds()) > 0 && cwnd > restart) cwnd >>= 1;
  m_tcb->m_cWnd = std::max(cwnd, restart);
  m_tcb->m_cWndInfl = m_tcb->m_cWnd.Get();
}

// ---- Receive-side ACK decision (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c) ----
//
// Replaces ns-3's rule (ACK every DelAckCount-th in-order segment, else after DelAckTimeout). Times
// are exact rather than jiffies; DelAckTimeout is Linux's TCP_ATO_MIN = TCP_DELACK_MIN.

namespace {
const ns3::Time kDelackMax = ns3::MilliSeconds(200);   // TCP_DELACK_MAX
const ns3::Time kHalfSecond = ns3::MilliSeconds(500);  // HZ / 2 in tcp_send_delayed_ack
}  // namespace

// tcp_data_queue + tcp_rcv_established's ACK part: queue the segment, then ACK now, or later.
// Unlike ns-3, the decision comes before the application is told about the data, as in Linux,
// where the application runs after the softirq that ACKed (or delayed the ACK).
void LinuxTcpSocket::ReceivedData(Ptr<ns3::Packet> packet, const ns3::TcpHeader& header) {
  auto& rx = *m_tcb->m_rxBuffer;
  const SequenceNumber32 expected = rx.NextRxSequence();
  const uint32_t size = packet->GetSize();
  if (!take_next_segment(packet, header.GetSequenceNumber()) && !rx.Add(packet, header)) {
    // Old data (a retransmission) or out of window: "Force an immediate ack", in quick-ACK mode.
    if (size > 0) enter_quickack_mode();
    ack_.scheduled = true;
    send_ack();
    return;
  }
  take_in_order_data();
  const bool in_order = header.GetSequenceNumber() <= expected;
  if (in_order) {
    const std::int64_t new_bytes = std::min<std::int64_t>(
        header.GetSequenceNumber() + size - expected, rx.NextRxSequence() - expected);
    on_data_received(static_cast<uint32_t>(new_bytes));
  } else {
    ack_.scheduled = true;  // tcp_data_queue_ofo: out of order, ACKed (SACKed) at once below
  }
  const bool gap = rx.Size() > 0;                                 // data still out of order
  const bool gap_filled = rx.NextRxSequence() > expected + size;  // RFC 5681 4.2: ACK at once
  if (!in_order || gap || gap_filled) {
    m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_NON_DELAYED_ACK);
    send_ack();
  } else {
    ack_send_check();
  }

  if (expected < rx.NextRxSequence()) {
    if (!m_shutdownRecv) NotifyDataRecv();
    // A FIN received earlier is in order now.
    if (rx.Finished() && (header.GetFlags() & ns3::TcpHeader::FIN) == 0) DoPeerClose();
  }
}

// tcp_event_data_recv: in-order data arrived.
void LinuxTcpSocket::on_data_received(uint32_t bytes) {
  ack_.scheduled = true;  // inet_csk_schedule_ack
  measure_rcv_mss(bytes);
  const ns3::Time now = ns3::Simulator::Now();
  const ns3::Time ato_min = m_delAckTimeout;  // TCP_ATO_MIN
  if (ack_.ato.IsZero()) {
    // The first data packet received: initialize the delayed-ACK engine.
    incr_quickack();
    ack_.ato = ato_min;
  } else {
    const ns3::Time m = now - ack_.lrcvtime;
    if (m <= ato_min / 2) {
      ack_.ato = ack_.ato / 2 + ato_min / 2;
    } else if (m < ack_.ato) {
      ack_.ato = std::min(ack_.ato / 2 + m, m_rto.Get());
    } else if (m > m_rto.Get()) {
      // "Too long gap. Apparently sender failed to restart window, so that we send ACKs quickly."
      incr_quickack();
    }
  }
  ack_.lrcvtime = now;
}

// tcp_measure_rcv_mss. The receiver cannot see write boundaries here (ns-3 sets no PSH): a
// segment shorter than a full one is taken as the pushed end of a write, as Linux marks it.
void LinuxTcpSocket::measure_rcv_mss(uint32_t bytes) {
  const uint32_t lss = ack_.last_seg_size;
  ack_.last_seg_size = 0;
  if (bytes >= ack_.rcv_mss) {
    ack_.rcv_mss = std::min(bytes, m_tcb->m_segmentSize);  // min(len, advmss)
    return;
  }
  // TCP_MSS_DEFAULT: a segment this long is a full one of a smaller MSS if the next one has the
  // same length.
  if (bytes >= 536) {
    ack_.last_seg_size = bytes;
    if (bytes == lss) {
      ack_.rcv_mss = bytes;
      return;
    }
  }
  if (ack_.pushed) ack_.pushed2 = true;
  ack_.pushed = true;
}

// tcp_incr_quickack(sk, TCP_MAX_QUICKACKS): up to 16 quick ACKs, at most half the receive window
// in segments of rcv_mss.
void LinuxTcpSocket::incr_quickack() {
  // tp->rcv_wnd: the window last advertised.
  const auto window =
      static_cast<std::uint32_t>(std::max<std::int64_t>(advertised_right_edge_ - ack_.rcv_wup, 0));
  std::uint32_t quickacks = window / (2 * ack_.rcv_mss);
  if (quickacks == 0) quickacks = 2;
  ack_.quick = std::max(ack_.quick, std::min(quickacks, kMaxQuickAcks));
}

void LinuxTcpSocket::enter_quickack_mode() {
  incr_quickack();
  ack_.pingpong = 0;  // inet_csk_exit_pingpong_mode
  ack_.ato = m_delAckTimeout;
}

// __tcp_ack_snd_check for in-order data: ACK now if more than one receive MSS is unacknowledged
// and the window's right edge can advance, or in quick-ACK mode; else delay.
void LinuxTcpSocket::ack_send_check() {
  const auto& rx = *m_tcb->m_rxBuffer;
  const std::int64_t unacked = rx.NextRxSequence() - ack_.rcv_wup;
  // "__tcp_select_window(sk) >= tp->rcv_wnd": Linux offers at most rcv_ssthresh, far below a
  // large buffer's free space, so the edge advances unless the buffer is under pressure (less
  // than half free); ns-3 offers all free space, which unread data always shrinks.
  const std::int64_t window_now = rx.MaxRxSequence() - rx.NextRxSequence();
  const std::int64_t window_sent = advertised_right_edge_ - ack_.rcv_wup;
  const bool edge_advances =
      window_now >= window_sent ||
      2 * (receive_buffer_capacity() - receive_buffer_used()) >= receive_buffer_capacity();
  if ((unacked > ack_.rcv_mss && edge_advances) || in_quickack_mode()) {
    m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_NON_DELAYED_ACK);
    send_ack();
    return;
  }
  m_congestionControl->CwndEvent(m_tcb, TcpSocketState::CA_EVENT_DELAYED_ACK);
  send_delayed_ack();
}

// tcp_send_delayed_ack: the timeout is ato, bounded by max(srtt, TCP_DELACK_MIN) and by 200 ms
// (500 ms when neither interactive nor pushed) once ato exceeds TCP_DELACK_MIN; an earlier
// pending timeout stays, and one about to fire (within ato/4) is replaced by an ACK now.
void LinuxTcpSocket::send_delayed_ack() {
  const ns3::Time now = ns3::Simulator::Now();
  const ns3::Time delack_min = m_delAckTimeout;
  ns3::Time ato = ack_.ato;
  if (ato > delack_min) {
    ns3::Time max_ato = in_pingpong_mode() || ack_.pushed ? kDelackMax : kHalfSecond;
    const ns3::Time srtt = m_rtt->GetEstimate();
    if (srtt.IsStrictlyPositive()) max_ato = std::min(max_ato, std::max(srtt, delack_min));
    ato = std::min(ato, max_ato);
  }
  ato = std::min(ato, kDelackMax);
  ns3::Time timeout = now + ato;
  if (m_delAckEvent.IsRunning()) {
    if (ack_.timeout <= now + ato / 4) {
      send_ack();
      return;
    }
    timeout = std::min(timeout, ack_.timeout);
  }
  ack_.scheduled = true;
  ack_.timeout = timeout;
  m_delAckEvent.Cancel();
  m_delAckEvent = ns3::Simulator::Schedule(timeout - now, &LinuxTcpSocket::DelAckTimeout, this);
}

// tcp_delack_timer_handler: the delayed ACK was "missed" (no data left to carry it). An interactive
// connection leaves pingpong mode with ato back at the minimum; otherwise ato doubles (up to the
// RTO). Then the ACK goes (ns-3's handler).
void LinuxTcpSocket::DelAckTimeout() {
  if (ack_.scheduled) {
    if (!in_pingpong_mode()) {
      ack_.ato = std::min(2 * ack_.ato, m_rto.Get());
    } else {
      ack_.pingpong = 0;
      ack_.ato = m_delAckTimeout;
    }
  }
  TcpSocketBase::DelAckTimeout();
}

void LinuxTcpSocket::send_ack() {
  const auto ecn = m_tcb->m_ecnState;
  if (ecn == TcpSocketState::ECN_CE_RCVD || ecn == TcpSocketState::ECN_SENDING_ECE) {
    SendEmptyPacket(ns3::TcpHeader::ACK | ns3::TcpHeader::ECE);
    m_tcb->m_ecnState = TcpSocketState::ECN_SENDING_ECE;
  } else {
    SendEmptyPacket(ns3::TcpHeader::ACK);
  }
}

// tcp_event_ack_sent (tcp_dec_quickack_mode, clearing the pending ACK and its timer) and
// tcp_select_window's rcv_wup, for every segment that carries an ACK. Only an ACK of new data
// uses up a quick ACK; leaving quick-ACK mode deflates ato.
void LinuxTcpSocket::on_ack_sent() {
  if (ack_.quick > 0) {
    const std::uint32_t acks = ack_.scheduled ? 1 : 0;
    if (acks >= ack_.quick) {
      ack_.quick = 0;
      ack_.ato = m_delAckTimeout;
    } else {
      ack_.quick -= acks;
    }
  }
  ack_.scheduled = ack_.pushed = ack_.pushed2 = false;
  m_delAckEvent.Cancel();
  ack_.rcv_wup = m_tcb->m_rxBuffer->NextRxSequence();
  // RFC 7323's Last.ACK.sent, which decides which timestamp is echoed (ts_recent). ns-3 advances
  // it on pure ACKs only; when every ACK rides on data (an interactive server), it would go on
  // echoing an old timestamp and the peer would measure RTTs as long as its request interval.
  // Linux compares with rcv_wup (tcp_replace_ts_recent), set by every segment sent.
  if (m_highTxAck < ack_.rcv_wup) m_highTxAck = ack_.rcv_wup;
}

// tcp_event_data_sent: data sent within ato of the last data received is a reply; one reply
// (net.ipv4.tcp_pingpong_thresh = 1) makes the connection interactive, whose ACKs are delayed.
void LinuxTcpSocket::on_data_sent() {
  if (ns3::Simulator::Now() - ack_.lrcvtime < ack_.ato && ack_.pingpong < 255) ++ack_.pingpong;
}

// tcp_cleanup_rbuf, after the application read `copied` bytes: ACK now if an ACK is owed and
// either more than one receive MSS is unacknowledged, or the read emptied the buffer after a
// pushed small segment (two of them when interactive). Else, ACK if we can now advertise a window
// at least twice what remains of the last advertised one, and that remainder is at most half the
// maximum window. Not once the peer has finished sending.
void LinuxTcpSocket::cleanup_after_read(std::uint32_t copied) {
  const auto& rx = *m_tcb->m_rxBuffer;
  if (m_state != ESTABLISHED && m_state != FIN_WAIT_1 && m_state != FIN_WAIT_2) return;
  bool time_to_ack = false;
  if (ack_.scheduled) {
    time_to_ack = rx.NextRxSequence() - ack_.rcv_wup > static_cast<std::int64_t>(ack_.rcv_mss) ||
                  (copied > 0 && (ack_.pushed2 || (ack_.pushed && !in_pingpong_mode())) &&
                   receive_buffer_used() == 0);
  }
  if (!time_to_ack && !rx.GotFin()) {
    const std::int64_t remaining =
        std::max<std::int64_t>(advertised_right_edge_ - rx.NextRxSequence(), 0);
    const std::int64_t now_open = rx.MaxRxSequence() - rx.NextRxSequence();
    time_to_ack =
        2 * remaining <= receive_buffer_capacity() && now_open > 0 && now_open >= 2 * remaining;
  }
  if (time_to_ack) send_ack();
}

namespace {

ns3::TypeId congestion_type(scenario::CongestionControl cc) {
  switch (cc) {
    case scenario::CongestionControl::kBbr:
      return LinuxBbr::GetTypeId();
    case scenario::CongestionControl::kNewReno:
      return ns3::TcpNewReno::GetTypeId();
    case scenario::CongestionControl::kCubic:
      break;
  }
  return LinuxCubic::GetTypeId();
}

}  // namespace

Ptr<LinuxTcpSocket> create_tcp_socket(Ptr<ns3::Node> node, const scenario::ResolvedTcp& tcp,
                                      std::uint32_t mtu_bytes, std::int64_t stream) {
  auto socket = ns3::CreateObject<LinuxTcpSocket>();
  ns3::ObjectFactory factory(congestion_type(tcp.congestion_control).GetName());
  auto congestion = factory.Create<ns3::TcpCongestionOps>();
  // Linux's HyStart replaces ns-3's (LinuxCubic).
  if (ns3::DynamicCast<LinuxCubic>(congestion))
    congestion->SetAttribute("HyStart", ns3::BooleanValue(false));
  if (auto bbr = ns3::DynamicCast<ns3::TcpBbr>(congestion)) {
    bbr->SetStream(static_cast<uint32_t>(stream));
    // Linux's BBR does not enter PROBE_RTT on the ACK that restarts an idle, app-limited flow
    // (bbr_update_min_rtt: !bbr->idle_restart), and that ACK refreshes the expired min RTT, so a
    // keep-alive connection serving requests never probes. ns-3's TcpBbr never flags an idle
    // restart (HandleRestartFromIdle is not called), so such a connection probed every 10 s with a
    // 4-packet window, then measured its bandwidth through it and paced its later responses at
    // ~1.4 Mbit/s. The min-RTT window is therefore longer than any simulated run; the cost: a bulk
    // flow longer than 10 s does not probe either (docs/tcp-model.md).
    bbr->SetAttribute("RttWindowLength", ns3::TimeValue(ns3::Hours(1)));
  }

  socket->SetNode(node);
  socket->SetTcp(node->GetObject<ns3::TcpL4Protocol>());
  socket->SetRtt(ns3::CreateObject<ns3::RttMeanDeviation>());
  socket->SetCongestionControlAlgorithm(congestion);
  socket->SetRecoveryAlgorithm(ns3::CreateObject<ns3::TcpPrrRecovery>());
  socket->m_rateOps = ns3::CreateObject<DeliveryRateEstimator>();
  socket->m_txBuffer->SetRWndCallback(
      ns3::MakeCallback(&LinuxTcpSocket::window_for_new_data, ns3::PeekPointer(socket)));

  // The attributes' own setters and members, which SetAttribute("Name", value) reaches after
  // looking the name up through the type chain (~15 % of making a socket).
  const ns3::Time min_rto = ns3::MicroSeconds(static_cast<std::int64_t>(tcp.min_rto_ms * 1000));
  socket->SetSegSize(tcp.segment_size(mtu_bytes));    // SegmentSize
  socket->SetInitialCwnd(tcp.initial_cwnd_segments);  // InitialCwnd
  socket->SetSndBufSize(tcp.send_buffer_bytes);       // SndBufSize
  socket->SetRcvBufSize(tcp.receive_buffer_bytes);    // RcvBufSize
  socket->SetDelAckTimeout(                           // DelAckTimeout
      ns3::MicroSeconds(static_cast<std::int64_t>(tcp.delayed_ack_ms * 1000)));
  // DelAckCount is unused: LinuxTcpSocket::ReceivedData makes Linux's ACK decision.
  socket->SetMinRto(min_rto);  // MinRto
  // Linux's RTO is srtt + max(4 rttvar, rto_min) (tcp_set_rto, with rttvar floored at the
  // route's rto_min, TCP_RTO_MIN by default); ns-3 computes RFC 6298's
  // max(MinRto, srtt + max(ClockGranularity, 4 rttvar)), which with ClockGranularity = rto_min is
  // Linux's formula. The RTO times slow start after idle (one halving per RTO of idle), so ns-3's
  // ~200 ms where Linux has RTT + 200 ms restarted the window after gaps that Linux lets pass.
  socket->SetClockGranularity(min_rto);     // ClockGranularity
  socket->SetConnTimeout(ns3::Seconds(1));  // ConnTimeout: Linux TCP_TIMEOUT_INIT (SYN RTO)
  socket->SetPersistTimeout(min_rto);       // PersistTimeout: Linux probes a zero window at the RTO
  // ns-3 holds TIME_WAIT for 2 MSL of 120 s; Linux for TCP_TIMEWAIT_LEN, 60 s. Each connection in
  // TIME_WAIT keeps its endpoint, which every arriving packet's demultiplexing walks past.
  socket->m_msl = 30;                           // MaxSegLifetime
  socket->m_sackEnabled = tcp.sack;             // Sack
  socket->m_timestampEnabled = tcp.timestamps;  // Timestamp
  socket->SetPacingStatus(tcp.pacing);
  socket->nagle_ = !tcp.nodelay;
  socket->m_noDelay = true;  // ns-3's Nagle would hold retransmissions too; see window_for_new_data
  socket->slow_start_after_idle_ = tcp.slow_start_after_idle;
  return socket;
}

}  // namespace tb::sim
