#include "twinbench/sim/linux_bbr.hpp"

namespace tb::sim {

ns3::TypeId LinuxBbr::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("twinbench::LinuxBbr")
                               .SetParent<ns3::TcpBbr>()
                               .SetGroupName("Internet")
                               .AddConstructor<LinuxBbr>();
  return tid;
}

template <typename Call>
void LinuxBbr::with_margin(ns3::TcpSocketState& tcb, Call call) {
  // Another writer (the socket's initial rate) leaves a rate that is not ours: TcpBbr sees it as
  // is. (m_pacingRate is traced: a PacingRate trace sees the unmargined rate briefly, then ours.)
  if (tcb.m_pacingRate.Get() == margined_rate_) tcb.m_pacingRate = bbr_rate_;
  const ns3::DataRate before = tcb.m_pacingRate;
  call();
  if (tcb.m_pacingRate.Get() == before && before != bbr_rate_)
    return;  // TcpBbr did not pace this flow yet
  bbr_rate_ = tcb.m_pacingRate;
  const auto bits =
      static_cast<double>(bbr_rate_.GetBitRate()) * (100.0 - kPacingMarginPercent) / 100.0;
  margined_rate_ = ns3::DataRate(static_cast<std::uint64_t>(bits));
  tcb.m_pacingRate = margined_rate_;
}

void LinuxBbr::CongControl(ns3::Ptr<ns3::TcpSocketState> tcb,
                           const ns3::TcpRateOps::TcpRateConnection& rc,
                           const ns3::TcpRateOps::TcpRateSample& rs) {
  // An ACK that found nothing in flight and delivered nothing (the peer's request arriving on an
  // idle connection) is no event for BBR: Linux's tcp_ack takes its no_queue path and never calls
  // tcp_cong_control. ns-3 calls TcpBbr with the empty sample, whose UpdateBtlBw returns before
  // UpdateRound, leaving m_roundStart set from the last ACK: CheckFullPipe then counts a round
  // without growth, and three idle requests end STARTUP that Linux keeps (docs/tcp-model.md).
  if (rs.m_priorInFlight == 0 && rs.m_ackedSacked == 0) return;
  with_margin(*tcb, [&] { TcpBbr::CongControl(tcb, rc, rs); });
}

void LinuxBbr::CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                                  ns3::TcpSocketState::TcpCongState_t state) {
  with_margin(*tcb, [&] { TcpBbr::CongestionStateSet(tcb, state); });
}

void LinuxBbr::CwndEvent(ns3::Ptr<ns3::TcpSocketState> tcb,
                         ns3::TcpSocketState::TcpCAEvent_t event) {
  with_margin(*tcb, [&] { TcpBbr::CwndEvent(tcb, event); });
}

ns3::Ptr<ns3::TcpCongestionOps> LinuxBbr::Fork() { return ns3::CopyObject<LinuxBbr>(this); }

}  // namespace tb::sim
