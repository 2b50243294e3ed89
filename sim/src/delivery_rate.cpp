#include "twinbench/sim/delivery_rate.hpp"

#include <ns3/simulator.h>
#include <ns3/tcp-tx-item.h>

#include <algorithm>

namespace tb::sim {

namespace {
// A packet's RateInformation::m_deliveredTime once it has been counted as delivered (SACKed), so
// that its cumulative ACK does not count it again; ns-3's TcpTxItem starts with the same value.
const ns3::Time kCounted = ns3::Time::Max();
}  // namespace

ns3::TypeId DeliveryRateEstimator::GetTypeId() {
  static ns3::TypeId tid = ns3::TypeId("twinbench::DeliveryRateEstimator")
                               .SetParent<ns3::TcpRateOps>()
                               .SetGroupName("Internet")
                               .AddConstructor<DeliveryRateEstimator>();
  return tid;
}

// OnPacketSent: each packet remembers the connection's delivery state at its (re)transmission.
void DeliveryRateEstimator::SkbSent(ns3::TcpTxItem* skb, bool is_start_of_transmission) {
  if (is_start_of_transmission) {
    // Nothing in flight: the sampling interval starts now, not at the last ACK of an earlier
    // flight.
    connection_.m_firstSentTime = ns3::Simulator::Now();
    connection_.m_deliveredTime = ns3::Simulator::Now();
  }
  auto& info = skb->GetRateInformation();
  info.m_firstSent = connection_.m_firstSentTime;
  info.m_deliveredTime = connection_.m_deliveredTime;
  info.m_delivered = connection_.m_delivered;
  info.m_isAppLimited = connection_.m_appLimited != 0;
}

// UpdateRateSample: called for each packet an ACK newly acknowledges or SACKs.
void DeliveryRateEstimator::SkbDelivered(ns3::TcpTxItem* skb) {
  auto& info = skb->GetRateInformation();
  if (info.m_deliveredTime == kCounted) return;
  connection_.m_delivered += skb->GetSeqSize();
  connection_.m_deliveredTime = ns3::Simulator::Now();
  connection_.m_txItemDelivered = static_cast<uint32_t>(info.m_delivered);
  // The sample describes the most recently sent of the packets this ACK delivered.
  const ns3::Time sent = skb->GetLastSent();
  if (!sample_has_data_ || sent >= connection_.m_firstSentTime) {
    sample_has_data_ = true;
    prior_delivered_ = info.m_delivered;
    sample_.m_priorDelivered = static_cast<uint32_t>(info.m_delivered);
    sample_.m_priorTime = info.m_deliveredTime;
    sample_.m_isAppLimited = info.m_isAppLimited;
    sample_.m_sendElapsed = sent - info.m_firstSent;
    sample_.m_ackElapsed = connection_.m_deliveredTime - info.m_deliveredTime;
    connection_.m_firstSentTime = sent;
  }
  info.m_deliveredTime = kCounted;
}

// The draft's CheckIfApplicationLimited, on each transmit attempt.
void DeliveryRateEstimator::CalculateAppLimited(uint32_t cwnd, uint32_t in_flight,
                                                uint32_t segment_size,
                                                const ns3::SequenceNumber32& tail_seq,
                                                const ns3::SequenceNumber32& next_tx,
                                                uint32_t lost_out, uint32_t retrans_out) {
  const bool little_to_send = tail_seq - next_tx < static_cast<int32_t>(segment_size);
  if (little_to_send && in_flight < cwnd && lost_out <= retrans_out) {
    connection_.m_appLimited =
        static_cast<uint32_t>(std::max<uint64_t>(connection_.m_delivered + in_flight, 1));
  }
}

namespace {

// A new sample. ns-3 builds one's delivery rate from the text "0bps" (TcpRateSample's member
// initialiser), through a stringstream: once per ACK that was ~1 % of a simulated download's
// instructions, so it is built once and copied.
const ns3::TcpRateOps::TcpRateSample& fresh_sample() {
  static const ns3::TcpRateOps::TcpRateSample sample{};
  return sample;
}

}  // namespace

// GenerateRateSample, once per ACK after its packets were delivered; the next ACK starts afresh.
const ns3::TcpRateOps::TcpRateSample& DeliveryRateEstimator::GenerateSample(
    uint32_t delivered, uint32_t lost, bool is_sack_reneg, uint32_t prior_in_flight,
    const ns3::Time& min_rtt) {
  if (connection_.m_appLimited != 0 && connection_.m_delivered > connection_.m_appLimited)
    connection_.m_appLimited = 0;

  TcpRateSample rs = sample_;
  rs.m_ackedSacked = delivered;
  rs.m_bytesLoss = lost;
  rs.m_priorInFlight = prior_in_flight;
  rs.m_deliveryRate = ns3::DataRate(0);
  const bool has_data = sample_has_data_;
  sample_ = fresh_sample();
  sample_has_data_ = false;

  // Invalid (no packet delivered, SACK reneging, or an interval shorter than min RTT, which only
  // ACK compression produces): BBR skips a sample with a zero rate.
  rs.m_interval = std::max(rs.m_sendElapsed, rs.m_ackElapsed);
  rs.m_delivered = static_cast<int32_t>(connection_.m_delivered - prior_delivered_);
  if (!has_data || is_sack_reneg || rs.m_interval < min_rtt || rs.m_interval.IsZero()) {
    rs.m_delivered = -1;
    rs.m_interval = ns3::Seconds(0);
    rs.m_priorTime = ns3::Seconds(0);
    last_sample_ = rs;
    return last_sample_;
  }
  rs.m_deliveryRate =
      ns3::DataRate(static_cast<uint64_t>(rs.m_delivered * 8.0 / rs.m_interval.GetSeconds()));
  // The connection's last non-app-limited (or highest app-limited) rate, like tcp_info's.
  if (!rs.m_isAppLimited ||
      static_cast<double>(rs.m_delivered) * connection_.m_rateInterval.GetSeconds() >=
          static_cast<double>(connection_.m_rateDelivered) * rs.m_interval.GetSeconds()) {
    connection_.m_rateDelivered = rs.m_delivered;
    connection_.m_rateInterval = rs.m_interval;
    connection_.m_rateAppLimited = rs.m_isAppLimited;
  }
  last_sample_ = rs;
  return last_sample_;
}

}  // namespace tb::sim
