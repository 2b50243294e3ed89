#pragma once
// A scenario network's parameters with every default filled in, in one place, for both twins
// (the ns-3 path and the emulated path). Defaults follow Linux (docs/tcp-model.md names the source
// of each), not ns-3.37, whose defaults differ.
#include <cstdint>
#include <vector>

#include "scenario.pb.h"

namespace tb::scenario {

enum class CongestionControl { kCubic, kBbr, kNewReno };

struct ResolvedTcp {
  CongestionControl congestion_control = CongestionControl::kCubic;
  std::uint32_t initial_cwnd_segments = 10;  // IW10, RFC 6928
  bool nodelay = false;                      // Nagle on
  bool sack = true;
  bool timestamps = true;
  double delayed_ack_ms = 40;                     // Linux TCP_ATO_MIN
  double min_rto_ms = 200;                        // Linux TCP_RTO_MIN
  std::uint64_t send_buffer_bytes = 4u << 20;     // tcp_wmem max
  std::uint64_t receive_buffer_bytes = 6u << 20;  // tcp_rmem max
  bool pacing = false;                // fq pacing for loss-based control; BBR always paces
  bool slow_start_after_idle = true;  // net.ipv4.tcp_slow_start_after_idle

  // Payload bytes per segment on a path with this MTU: IPv4 (20) + TCP (20) headers, plus the
  // timestamp option (10, padded to 12) when enabled.
  std::uint32_t segment_size(std::uint32_t mtu_bytes) const {
    return mtu_bytes - 40 - (timestamps ? 12 : 0);
  }
};

// A drop-tail queue limit: in packets when `packets` is non-zero, else in bytes.
struct QueueLimit {
  std::uint32_t packets = 0;
  std::uint64_t bytes = 0;
};

// One step of a schedule: from at_ms on (ms from the start of the run's first request) the value
// is `value`. A schedule's steps are in increasing at_ms.
struct ScheduleStep {
  double at_ms = 0;
  double value = 0;
};

// A schedule's value at t_ms: the last step's at or before t_ms, else `before` (the constant).
double scheduled_value(const std::vector<ScheduleStep>& steps, double before, double t_ms);

struct ResolvedLink {
  double client_to_server_delay_ms = 0;
  double server_to_client_delay_ms = 0;
  double downlink_mbps = 0;
  double uplink_mbps = 0;
  QueueLimit downlink_queue;  // at the server -> client bottleneck
  QueueLimit uplink_queue;    // at the client -> server bottleneck
  double loss_rate = 0;
  double jitter_ms = 0;
  std::uint32_t mtu_bytes = 1500;
  double downlink_policer_mbps = 0;  // 0: no policer
  std::uint64_t downlink_policer_burst_bytes = 0;
  // A link that changes over time (delivery_trace.hpp). With a trace, that direction's rate
  // above is the trace's mean rate (the default queue is sized by it).
  std::vector<std::uint32_t> downlink_trace_ms;  // empty: the constant downlink_mbps
  std::vector<std::uint32_t> uplink_trace_ms;    // empty: the constant uplink_mbps
  std::vector<ScheduleStep> client_to_server_delay_schedule;
  std::vector<ScheduleStep> server_to_client_delay_schedule;
  std::vector<ScheduleStep> loss_schedule;  // each way

  bool varies_over_time() const {
    return !downlink_trace_ms.empty() || !uplink_trace_ms.empty() ||
           !client_to_server_delay_schedule.empty() || !server_to_client_delay_schedule.empty() ||
           !loss_schedule.empty();
  }
};

// Whether a link has a delivery trace or a schedule (ResolvedLink::varies_over_time, unresolved).
bool varies_over_time(const twinbench::Link& link);

ResolvedTcp resolve(const twinbench::Tcp& tcp);
// Unset queues default to one bandwidth-delay product (that direction's rate x the base RTT), at
// least kMinQueuePackets full-size packets.
ResolvedLink resolve(const twinbench::Link& link);
inline constexpr std::uint32_t kMinQueuePackets = 100;

}  // namespace tb::scenario
