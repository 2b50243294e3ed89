// SPDX-License-Identifier: GPL-2.0-only
// Replaces ns-3.37's TcpCubic HyStart (src/internet/model/tcp-cubic.cc, GPL-2.0-only) with
// Linux's (LICENSE).
#include "twinbench/sim/linux_cubic.hpp"

#include <algorithm>

#include <ns3/simulator.h>

namespace tb::sim {

namespace {

// Linux's constants (tcp_cubic.c).
constexpr std::uint32_t kLowWindowSegments = 16;       // hystart_low_window
constexpr std::uint32_t kMinSamples = 8;               // HYSTART_MIN_SAMPLES
const ns3::Time kAckDelta = ns3::MicroSeconds(2000);   // hystart_ack_delta_us
const ns3::Time kDelayMin = ns3::MicroSeconds(4000);   // HYSTART_DELAY_MIN
const ns3::Time kDelayMax = ns3::MicroSeconds(16000);  // HYSTART_DELAY_MAX

}  // namespace

ns3::TypeId LinuxCubic::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("twinbench::LinuxCubic")
                               .SetParent<ns3::TcpCubic>()
                               .SetGroupName("Internet")
                               .AddConstructor<LinuxCubic>();
  return tid;
}

LinuxCubic::LinuxCubic() = default;

ns3::Ptr<ns3::TcpCongestionOps> LinuxCubic::Fork() { return ns3::CopyObject<LinuxCubic>(this); }

void LinuxCubic::hystart_reset(const ns3::TcpSocketState& tcb) {
  round_start_ = last_ack_ = ns3::Simulator::Now();
  end_seq_ = tcb.m_highTxMark;
  curr_rtt_ = ns3::Time::Max();
  sample_count_ = 0;
  round_started_ = true;
}

// cubictcp_acked: the sample updates delay_min, and HyStart looks at it while in slow start.
void LinuxCubic::PktsAcked(ns3::Ptr<ns3::TcpSocketState> tcb, uint32_t segments_acked,
                           const ns3::Time& rtt) {
  TcpCubic::PktsAcked(tcb, segments_acked, rtt);
  const ns3::Time delay = std::max(ack_rtt_, ns3::MicroSeconds(1));
  const bool sample = ack_rtt_.IsStrictlyPositive();
  ack_rtt_ = ns3::Time();  // one sample per ACK (ns-3 may call this more than once for it)
  if (!sample) return;
  if (delay_min_.IsZero() || delay_min_ > delay) delay_min_ = delay;
  if (!found_ && tcb->m_cWnd < tcb->m_ssThresh) hystart_update(*tcb, delay);
}

void LinuxCubic::hystart_update(ns3::TcpSocketState& tcb, ns3::Time delay) {
  if (!round_started_ || tcb.m_lastAckedSeq > end_seq_) hystart_reset(tcb);
  if (tcb.m_cWnd.Get() / tcb.m_segmentSize < kLowWindowSegments) return;

  const ns3::Time now = ns3::Simulator::Now();
  // The ACK train: ACKs no more than 2 ms apart since the round started, for longer than half
  // the minimum RTT (the whole of it when paced: pacing spreads a round over up to half an RTT).
  if (now - last_ack_ <= kAckDelta) {
    last_ack_ = now;
    const ns3::Time threshold = tcb.m_pacing ? delay_min_ : delay_min_ / 2;
    if (now - round_start_ > threshold) found_ = true;
  }
  // The delay: the round's smallest RTT, after 8 samples, above delay_min by an eighth of it
  // (between 4 and 16 ms).
  curr_rtt_ = std::min(curr_rtt_, delay);
  if (sample_count_ < kMinSamples) {
    ++sample_count_;
  } else if (curr_rtt_ > delay_min_ + std::clamp(delay_min_ / 8, kDelayMin, kDelayMax)) {
    found_ = true;
  }
  if (found_) tcb.m_ssThresh = tcb.m_cWnd.Get();
}

// A loss (RTO) resets CUBIC and lets HyStart work again in the slow start that follows
// (cubictcp_state: bictcp_reset, bictcp_hystart_reset).
void LinuxCubic::CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                                    const ns3::TcpSocketState::TcpCongState_t state) {
  TcpCubic::CongestionStateSet(tcb, state);
  if (state == ns3::TcpSocketState::CA_LOSS) {
    found_ = false;
    hystart_reset(*tcb);
  }
}

}  // namespace tb::sim
