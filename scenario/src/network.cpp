#include "twinbench/scenario/network.hpp"

#include "twinbench/scenario/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tb::scenario {
namespace {

QueueLimit queue_limit(const twinbench::Link& link, double mbps, double rtt_ms, std::uint32_t mtu) {
  if (link.queue_packets() > 0) return {link.queue_packets(), 0};
  if (link.queue_bytes() > 0) return {0, link.queue_bytes()};
  const auto bdp = static_cast<std::uint64_t>(std::ceil(mbps * 1e6 / 8 * rtt_ms / 1e3));
  return {0, std::max<std::uint64_t>(bdp, std::uint64_t{kMinQueuePackets} * mtu)};
}

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("network." + what);
}

}  // namespace

ResolvedTcp resolve(const twinbench::Tcp& tcp) {
  ResolvedTcp r;
  switch (tcp.congestion_control()) {
    case twinbench::CONGESTION_CONTROL_UNSPECIFIED:
    case twinbench::CUBIC:
      r.congestion_control = CongestionControl::kCubic;
      break;
    case twinbench::BBR:
      r.congestion_control = CongestionControl::kBbr;
      break;
    case twinbench::NEW_RENO:
      r.congestion_control = CongestionControl::kNewReno;
      break;
    default:
      throw InputError("tcp.congestion_control: unknown value " +
                       std::to_string(tcp.congestion_control()));
  }
  if (tcp.initial_cwnd_segments() > 0) r.initial_cwnd_segments = tcp.initial_cwnd_segments();
  r.nodelay = tcp.nodelay();
  if (tcp.has_sack()) r.sack = tcp.sack();
  if (tcp.has_timestamps()) r.timestamps = tcp.timestamps();
  if (tcp.has_delayed_ack_ms()) r.delayed_ack_ms = tcp.delayed_ack_ms();
  if (tcp.has_min_rto_ms()) r.min_rto_ms = tcp.min_rto_ms();
  if (tcp.send_buffer_bytes() > 0) r.send_buffer_bytes = tcp.send_buffer_bytes();
  if (tcp.receive_buffer_bytes() > 0) r.receive_buffer_bytes = tcp.receive_buffer_bytes();
  r.pacing = tcp.pacing() || r.congestion_control == CongestionControl::kBbr;
  if (tcp.has_slow_start_after_idle()) r.slow_start_after_idle = tcp.slow_start_after_idle();
  return r;
}

ResolvedLink resolve(const twinbench::Link& link) {
  ResolvedLink r;
  r.client_to_server_delay_ms = link.client_to_server_delay_ms();
  r.server_to_client_delay_ms = link.server_to_client_delay_ms();
  r.downlink_mbps = link.downlink_mbps();
  r.uplink_mbps = link.uplink_mbps();
  r.loss_rate = link.loss_rate();
  r.jitter_ms = link.jitter_ms();
  if (link.mtu_bytes() > 0) r.mtu_bytes = link.mtu_bytes();
  r.downlink_policer_mbps = link.downlink_policer_mbps();
  r.downlink_policer_burst_bytes = link.downlink_policer_burst_bytes();
  require(r.client_to_server_delay_ms >= 0 && r.server_to_client_delay_ms >= 0,
          "link: negative delay");
  require(r.downlink_mbps > 0 && r.uplink_mbps > 0, "link: bottleneck rates must be > 0");
  require(r.loss_rate >= 0 && r.loss_rate < 1, "link.loss_rate: must be in [0, 1)");
  require(r.jitter_ms >= 0, "link.jitter_ms: negative");
  require(r.downlink_policer_mbps >= 0, "link.downlink_policer_mbps: negative");
  require(r.downlink_policer_mbps == 0 || r.downlink_policer_burst_bytes >= r.mtu_bytes,
          "link.downlink_policer_burst_bytes: must hold at least one packet of the MTU");
  require(r.mtu_bytes >= 576 && r.mtu_bytes <= 65535, "link.mtu_bytes: must be in [576, 65535]");
  const double rtt_ms = r.client_to_server_delay_ms + r.server_to_client_delay_ms;
  r.downlink_queue = queue_limit(link, r.downlink_mbps, rtt_ms, r.mtu_bytes);
  r.uplink_queue = queue_limit(link, r.uplink_mbps, rtt_ms, r.mtu_bytes);
  return r;
}

}  // namespace tb::scenario
