#pragma once
// BBR v1 as Linux paces it: ns-3.37's TcpBbr with Linux's pacing margin.
//
// Linux paces 1 % below the rate BBR asks for (net/ipv4/tcp_bbr.c, bbr_pacing_margin_percent,
// applied in bbr_rate_bytes_per_sec to every pacing rate BBR sets, startup's included), "to reduce
// queue at bottleneck": a flow paced at exactly its bandwidth estimate keeps any queue an
// over-estimate built. ns-3.37's TcpBbr paces at the full rate. A response that fits in the
// congestion window, paced at gain 1 after an idle, takes 1 % longer with the margin.
//
// TcpBbr compares a new rate with the current one (in startup it only raises the rate), so this
// class hands TcpBbr back its own last rate before each call and applies the margin after it:
// TcpBbr's comparisons then see its own rates, as Linux's see the margined ones on both sides.
#include <ns3/data-rate.h>
#include <ns3/tcp-bbr.h>

namespace tb::sim {

class LinuxBbr : public ns3::TcpBbr {
 public:
  // Linux's bbr_pacing_margin_percent.
  static constexpr double kPacingMarginPercent = 1.0;

  static ns3::TypeId GetTypeId();

  void CongControl(ns3::Ptr<ns3::TcpSocketState> tcb, const ns3::TcpRateOps::TcpRateConnection& rc,
                   const ns3::TcpRateOps::TcpRateSample& rs) override;
  void CongestionStateSet(ns3::Ptr<ns3::TcpSocketState> tcb,
                          ns3::TcpSocketState::TcpCongState_t state) override;
  void CwndEvent(ns3::Ptr<ns3::TcpSocketState> tcb,
                 ns3::TcpSocketState::TcpCAEvent_t event) override;
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override;

 private:
  // Runs one of TcpBbr's entry points with its own last rate in place, then applies the margin.
  template <typename Call>
  void with_margin(ns3::TcpSocketState& tcb, Call call);

  ns3::DataRate bbr_rate_;       // the rate TcpBbr last set
  ns3::DataRate margined_rate_;  // what the flow paces at instead
};

}  // namespace tb::sim
