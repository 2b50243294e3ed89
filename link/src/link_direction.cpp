#include "twinbench/link/link_direction.hpp"

#include <algorithm>
#include <cmath>

#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/seeds.hpp"

namespace tb::link {
namespace {

std::int64_t ms_to_ns(double ms) { return std::llround(ms * 1e6); }

}  // namespace

DirectionConfig downlink_of(const scenario::ResolvedLink& link, std::uint64_t seed) {
  return {link.downlink_mbps,
          link.downlink_queue,
          link.server_to_client_delay_ms,
          link.jitter_ms,
          link.loss_rate,
          link.downlink_policer_mbps,
          link.downlink_policer_burst_bytes,
          seed * 2 + 1,
          link.downlink_trace_ms,
          link.server_to_client_delay_schedule,
          link.loss_schedule};
}

DirectionConfig uplink_of(const scenario::ResolvedLink& link, std::uint64_t seed) {
  return {link.uplink_mbps,
          link.uplink_queue,
          link.client_to_server_delay_ms,
          link.jitter_ms,
          link.loss_rate,
          0,
          0,
          seed * 2 + 2,
          link.uplink_trace_ms,
          link.client_to_server_delay_schedule,
          link.loss_schedule};
}

LinkDirection::LinkDirection(const DirectionConfig& config)
    : config_(config),
      tokens_(static_cast<double>(config.policer_burst_bytes)),
      draws_(scenario::splitmix64(config.seed)) {}

double LinkDirection::uniform() {
  // The top 53 bits of the next SplitMix64 output: a double in [0, 1) with every bit random.
  return static_cast<double>(scenario::splitmix64(draws_++) >> 11) * 0x1.0p-53;
}

std::int64_t LinkDirection::serialisation_ns(std::size_t wire_bytes) const {
  return std::llround(static_cast<double>(wire_bytes) * 8 * 1e3 / config_.mbps);
}

// ns-3's DropTailQueue refuses a packet that would take it past its limit.
bool LinkDirection::queue_full(std::size_t wire_bytes) const {
  if (config_.queue.packets > 0) return waiting_.size() + 1 > config_.queue.packets;
  return waiting_bytes_ + wire_bytes > config_.queue.bytes;
}

// The token bucket of sim_network.cpp's PolicerErrorModel, evaluated at arrival: arrivals are in
// order, so evaluating at offer time is the same as at the receiver.
bool LinkDirection::policed(std::int64_t arrival_ns, std::size_t wire_bytes) {
  if (config_.policer_mbps <= 0) return false;
  const double bytes_per_ns = config_.policer_mbps * 1e6 / 8 / 1e9;
  tokens_ = std::min(static_cast<double>(config_.policer_burst_bytes),
                     tokens_ + static_cast<double>(arrival_ns - tokens_at_ns_) * bytes_per_ns);
  tokens_at_ns_ = arrival_ns;
  const auto size = static_cast<double>(wire_bytes);
  if (size > tokens_) return true;
  tokens_ -= size;
  return false;
}

// Mahimahi's trace semantics (the header): the opportunities in order from the first one a packet
// can use, each taking up to kTraceOpportunityBytes of it.
std::int64_t LinkDirection::trace_departure(std::int64_t start_ns, bool was_waiting,
                                            std::size_t wire_bytes) {
  auto bytes = static_cast<std::int64_t>(wire_bytes);
  Opportunity o;
  if (was_waiting) {
    // What the opportunity that finished the packet before had left is this packet's.
    if (static_cast<std::int64_t>(left_in_last_used_) >= bytes) {
      left_in_last_used_ -= static_cast<std::uint32_t>(bytes);
      return busy_until_ns_;
    }
    bytes -= left_in_last_used_;
    o = next(last_used_);
    if (opportunity_ns(o) < start_ns) o = first_opportunity_at_or_after(start_ns);  // origin moved
  } else {
    o = first_opportunity_at_or_after(start_ns);
  }
  for (;; o = next(o)) {
    bytes -= scenario::kTraceOpportunityBytes;
    if (bytes <= 0) break;
  }
  last_used_ = o;
  left_in_last_used_ = static_cast<std::uint32_t>(-bytes);
  return opportunity_ns(o);
}

std::int64_t LinkDirection::opportunity_ns(const Opportunity& o) const {
  const std::int64_t period_ms = config_.trace_ms.back();
  return origin_ns_ + (o.loop * period_ms + config_.trace_ms[o.index]) * 1'000'000;
}

LinkDirection::Opportunity LinkDirection::first_opportunity_at_or_after(std::int64_t t_ns) const {
  const std::int64_t period_ns = std::int64_t{config_.trace_ms.back()} * 1'000'000;
  const std::int64_t since_origin = t_ns - origin_ns_;
  const std::int64_t loop = since_origin > 0 ? since_origin / period_ns : 0;
  const std::int64_t within_ns = since_origin - loop * period_ns;
  // The first line at or after within_ns: its ms rounded up.
  const std::int64_t ms = within_ns <= 0 ? 0 : (within_ns + 999'999) / 1'000'000;
  const auto at = std::lower_bound(config_.trace_ms.begin(), config_.trace_ms.end(), ms,
                                   [](std::uint32_t line, std::int64_t t) { return line < t; });
  if (at == config_.trace_ms.end()) return {loop + 1, 0};
  return {loop, static_cast<std::size_t>(at - config_.trace_ms.begin())};
}

LinkDirection::Opportunity LinkDirection::next(Opportunity o) const {
  if (o.index + 1 < config_.trace_ms.size()) return {o.loop, o.index + 1};
  return {o.loop + 1, 0};
}

Verdict LinkDirection::offer(std::int64_t now_ns, std::size_t ip_bytes) {
  while (!waiting_.empty() && waiting_.front().start_ns <= now_ns) {
    waiting_bytes_ -= waiting_.front().wire_bytes;
    waiting_.pop_front();
  }
  const std::size_t wire = ip_bytes + kLinkHeaderBytes;
  const bool traced = !config_.trace_ms.empty();
  // A trace's link is busy until the opportunity that delivers the last packet's last bytes; a
  // packet arriving in that very instant shares it.
  const bool transmitter_busy = traced ? busy_until_ns_ >= now_ns : busy_until_ns_ > now_ns;
  if (transmitter_busy && queue_full(wire)) return {Fate::kQueueFull, 0};
  const std::int64_t start = std::max(now_ns, busy_until_ns_);
  if (transmitter_busy) {
    waiting_.push_back({start, wire});
    waiting_bytes_ += wire;
  }
  busy_until_ns_ =
      traced ? trace_departure(start, transmitter_busy, wire) : start + serialisation_ns(wire);
  const double since_origin_ms = static_cast<double>(busy_until_ns_ - origin_ns_) / 1e6;
  const double delay_ms =
      scenario::scheduled_value(config_.delay_schedule, config_.delay_ms, since_origin_ms);
  std::int64_t arrival = busy_until_ns_ + ms_to_ns(delay_ms);
  if (config_.jitter_ms > 0) arrival += std::llround(uniform() * config_.jitter_ms * 1e6);
  arrival = std::max(arrival, last_arrival_ns_);  // a path does not reorder
  last_arrival_ns_ = arrival;
  if (policed(arrival, wire)) return {Fate::kPoliced, 0};
  const double loss_rate =
      scenario::scheduled_value(config_.loss_schedule, config_.loss_rate, since_origin_ms);
  if (loss_rate > 0 && uniform() < loss_rate) return {Fate::kLost, 0};
  return {Fate::kDelivered, arrival};
}

}  // namespace tb::link
