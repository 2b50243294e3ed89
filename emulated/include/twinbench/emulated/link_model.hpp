#pragma once
// One direction of the emulated path, sans-IO: given when a packet reaches the bottleneck and how
// big it is, when it leaves the far end, or why it is dropped. It follows the simulated link
// (sim/src/sim_network.cpp) packet for packet: an ns-3 point-to-point device whose transmit queue
// is a drop-tail queue (the packet being serialised is not in it), serialisation of the IP packet
// plus the 2-byte PPP header at the rate, then the one-way delay plus uniform jitter that never
// reorders; at the receiver the downlink policer, then random loss. Only the random streams
// differ from the simulation's, so loss and jitter are statistically, not bitwise, the same.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>

#include "twinbench/scenario/network.hpp"

namespace tb::emulated {

// The bytes a packet occupies on the simulated wire besides its IP packet (ns-3's PppHeader).
inline constexpr std::size_t kLinkHeaderBytes = 2;

struct DirectionConfig {
  double mbps = 0;
  scenario::QueueLimit queue;
  double delay_ms = 0;
  double jitter_ms = 0;
  double loss_rate = 0;
  double policer_mbps = 0;  // 0: no policer
  std::uint64_t policer_burst_bytes = 0;
  std::uint64_t seed = 0;
};

// The two directions of a scenario's link. `seed` gives each direction its own stream.
DirectionConfig downlink_of(const scenario::ResolvedLink& link, std::uint64_t seed);
DirectionConfig uplink_of(const scenario::ResolvedLink& link, std::uint64_t seed);

enum class Fate { kDelivered, kQueueFull, kPoliced, kLost };

struct Verdict {
  Fate fate = Fate::kDelivered;
  std::int64_t due_ns = 0;  // when the packet leaves the far end (kDelivered only)
};

class LinkDirection {
 public:
  explicit LinkDirection(const DirectionConfig& config);

  // A packet of `ip_bytes` reaches the bottleneck at `now_ns` (monotonic, non-decreasing between
  // calls). Due times of delivered packets never decrease, so a FIFO holds them in order.
  Verdict offer(std::int64_t now_ns, std::size_t ip_bytes);

  std::size_t waiting_packets() const { return waiting_.size(); }

 private:
  struct Waiting {
    std::int64_t start_ns;  // when its serialisation starts (it leaves the queue)
    std::size_t wire_bytes;
  };
  std::int64_t serialisation_ns(std::size_t wire_bytes) const;
  bool queue_full(std::size_t wire_bytes) const;
  bool policed(std::int64_t arrival_ns, std::size_t wire_bytes);

  DirectionConfig config_;
  std::deque<Waiting> waiting_;
  std::uint64_t waiting_bytes_ = 0;
  std::int64_t busy_until_ns_ = 0;  // the transmitter is serialising until then
  std::int64_t last_arrival_ns_ = 0;
  double tokens_ = 0;
  std::int64_t tokens_at_ns_ = 0;
  std::mt19937_64 random_;
};

}  // namespace tb::emulated
