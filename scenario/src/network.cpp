#include "twinbench/scenario/network.hpp"

#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/input_error.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
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

double scheduled_value(const std::vector<ScheduleStep>& steps, double before, double t_ms) {
  // The first step after t_ms; the one before it (if any) holds.
  const auto after = std::upper_bound(steps.begin(), steps.end(), t_ms,
                                      [](double t, const ScheduleStep& s) { return t < s.at_ms; });
  return after == steps.begin() ? before : std::prev(after)->value;
}

bool varies_over_time(const twinbench::Link& link) {
  return link.has_downlink_trace() || link.has_uplink_trace() ||
         link.client_to_server_delay_schedule_size() > 0 ||
         link.server_to_client_delay_schedule_size() > 0 || link.loss_schedule_size() > 0;
}

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
  r.downlink_trace_ms.assign(link.downlink_trace().opportunities_ms().begin(),
                             link.downlink_trace().opportunities_ms().end());
  r.uplink_trace_ms.assign(link.uplink_trace().opportunities_ms().begin(),
                           link.uplink_trace().opportunities_ms().end());
  if (!r.downlink_trace_ms.empty()) r.downlink_mbps = trace_mean_mbps(r.downlink_trace_ms);
  if (!r.uplink_trace_ms.empty()) r.uplink_mbps = trace_mean_mbps(r.uplink_trace_ms);
  const auto steps = [](const auto& repeated) {
    std::vector<ScheduleStep> out;
    for (const auto& step : repeated) out.push_back({step.at_ms(), step.value()});
    return out;
  };
  r.client_to_server_delay_schedule = steps(link.client_to_server_delay_schedule());
  r.server_to_client_delay_schedule = steps(link.server_to_client_delay_schedule());
  r.loss_schedule = steps(link.loss_schedule());
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
