#include "twinbench/emulated/link_model.hpp"

#include <algorithm>
#include <cmath>

namespace tb::emulated {
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
          seed * 2 + 1};
}

DirectionConfig uplink_of(const scenario::ResolvedLink& link, std::uint64_t seed) {
  return {link.uplink_mbps,
          link.uplink_queue,
          link.client_to_server_delay_ms,
          link.jitter_ms,
          link.loss_rate,
          0,
          0,
          seed * 2 + 2};
}

LinkDirection::LinkDirection(const DirectionConfig& config)
    : config_(config),
      tokens_(static_cast<double>(config.policer_burst_bytes)),
      random_(config.seed) {}

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

Verdict LinkDirection::offer(std::int64_t now_ns, std::size_t ip_bytes) {
  while (!waiting_.empty() && waiting_.front().start_ns <= now_ns) {
    waiting_bytes_ -= waiting_.front().wire_bytes;
    waiting_.pop_front();
  }
  const std::size_t wire = ip_bytes + kLinkHeaderBytes;
  const bool transmitter_busy = busy_until_ns_ > now_ns;
  if (transmitter_busy && queue_full(wire)) return {Fate::kQueueFull, 0};
  const std::int64_t start = std::max(now_ns, busy_until_ns_);
  if (transmitter_busy) {
    waiting_.push_back({start, wire});
    waiting_bytes_ += wire;
  }
  busy_until_ns_ = start + serialisation_ns(wire);
  std::int64_t arrival = busy_until_ns_ + ms_to_ns(config_.delay_ms);
  if (config_.jitter_ms > 0) {
    std::uniform_real_distribution<double> jitter(0, config_.jitter_ms * 1e6);
    arrival += std::llround(jitter(random_));
  }
  arrival = std::max(arrival, last_arrival_ns_);  // a path does not reorder
  last_arrival_ns_ = arrival;
  if (policed(arrival, wire)) return {Fate::kPoliced, 0};
  if (config_.loss_rate > 0 &&
      std::uniform_real_distribution<double>(0, 1)(random_) < config_.loss_rate)
    return {Fate::kLost, 0};
  return {Fate::kDelivered, arrival};
}

}  // namespace tb::emulated
