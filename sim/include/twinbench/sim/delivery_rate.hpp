#pragma once
// Delivery-rate sampling for BBR, as specified by the IETF draft "Delivery Rate Estimation"
// (draft-cheng-iccrg-delivery-rate-estimation) and done by Linux (net/ipv4/tcp_rate.c).
//
// Replaces ns-3.37's TcpRateLinux, whose samples diverge from that specification in three ways
// that matter for BBR during loss recovery (docs/tcp-model.md, "BBR recovery stall"):
// - the rate sample is not reset per ACK, and after an invalid sample its "prior time" is zero, so
//   the next sample's ACK phase runs from time zero and its rate is tiny (tens of kbit/s);
// - the ACK phase of a sample is measured from the previous sample's packet, not this one's;
// - an invalid or app-limited sample keeps the previous sample's rate, which BBR then re-uses.
// ns-3's BBR takes such a sample into its max-bandwidth filter and paces at it after a recovery.
#include <cstdint>

#include <ns3/nstime.h>
#include <ns3/tcp-rate-ops.h>

namespace tb::sim {

class DeliveryRateEstimator : public ns3::TcpRateOps {
 public:
  static ns3::TypeId GetTypeId();

  void SkbSent(ns3::TcpTxItem* skb, bool is_start_of_transmission) override;
  void SkbDelivered(ns3::TcpTxItem* skb) override;
  void CalculateAppLimited(uint32_t cwnd, uint32_t in_flight, uint32_t segment_size,
                           const ns3::SequenceNumber32& tail_seq,
                           const ns3::SequenceNumber32& next_tx, uint32_t lost_out,
                           uint32_t retrans_out) override;
  const TcpRateSample& GenerateSample(uint32_t delivered, uint32_t lost, bool is_sack_reneg,
                                      uint32_t prior_in_flight, const ns3::Time& min_rtt) override;
  const TcpRateConnection& GetConnectionRate() override { return connection_; }

 private:
  TcpRateConnection connection_;  // the draft's C.*
  TcpRateSample sample_;          // the draft's rs.*, built up by the packets of one ACK
  TcpRateSample last_sample_;     // the sample GenerateSample returned
  bool sample_has_data_ = false;  // rs.has_data: a packet was delivered by this ACK
  uint64_t prior_delivered_ = 0;  // rs.prior_delivered in full (ns-3's sample field is 32-bit)
};

}  // namespace tb::sim
