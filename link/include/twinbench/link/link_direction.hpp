#pragma once
// One direction of the path's bottleneck link, sans-IO: given when a packet reaches the bottleneck
// and how big it is, when it leaves the far end, or why it is dropped. Both twins run it: the
// emulated path for every link, the simulation for links that change over time (a constant link
// there is ns-3's point-to-point device, which this follows packet for packet).
//
// A constant link: a drop-tail queue (the packet being serialised is not in it), serialisation
// of the IP packet plus the 2-byte PPP header at the rate, then the one-way delay plus uniform
// jitter that never reorders; at the receiver the downlink policer, then random loss.
//
// A link that changes over time (docs/scenarios.md, "Links that change over time"):
// - a delivery trace replaces serialisation at a rate, with Mahimahi's semantics: at each of the
//   trace's opportunities the link delivers up to kTraceOpportunityBytes bytes of the packets
//   waiting, in order; a packet may take several opportunities (bytes are counted, not packets),
//   and what an opportunity does not use is lost, as is an opportunity with no packet waiting. A
//   packet arriving in the very ms of an opportunity can use it. The trace loops.
// - the delay and loss schedules give the one-way delay and loss rate of a packet by the time it
//   leaves the bottleneck; a packet never overtakes the one before it when the delay falls.
// Times of traces and schedules count from the origin (set_origin), the start of the run.
//
// The random streams (loss, jitter) are the model's own, so the twins agree on them
// statistically, not bitwise (the constant link in simulation draws from ns-3's). They are
// SplitMix64 counters, not <random> distributions, so a seed gives the same draws everywhere.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <vector>

#include "twinbench/scenario/network.hpp"

namespace tb::link {

// The bytes a packet occupies on the simulated wire besides its IP packet (ns-3's PppHeader).
inline constexpr std::size_t kLinkHeaderBytes = 2;

struct DirectionConfig {
  double mbps = 0;  // the rate of a constant link (ignored with a trace)
  scenario::QueueLimit queue;
  double delay_ms = 0;
  double jitter_ms = 0;
  double loss_rate = 0;
  double policer_mbps = 0;  // 0: no policer
  std::uint64_t policer_burst_bytes = 0;
  std::uint64_t seed = 0;
  std::vector<std::uint32_t> trace_ms;  // delivery opportunities; empty: the constant rate
  std::vector<scenario::ScheduleStep> delay_schedule;  // ms; before its first step: delay_ms
  std::vector<scenario::ScheduleStep> loss_schedule;   // before its first step: loss_rate
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

  // Where time 0 of the trace and the schedules is, on the clock offer() is given (default 0).
  // May move while packets are in the link: only the trace's and the schedules' times move.
  void set_origin(std::int64_t origin_ns) {
    origin_ns_ = origin_ns;
    left_in_last_used_ = 0;  // that opportunity is no longer where it was
  }

  std::size_t waiting_packets() const { return waiting_.size(); }

 private:
  struct Waiting {
    std::int64_t start_ns;  // when its serialisation starts (it leaves the queue)
    std::size_t wire_bytes;
  };
  // One delivery opportunity of the looping trace: the `index`th line in loop `loop`.
  struct Opportunity {
    std::int64_t loop = 0;
    std::size_t index = 0;
  };
  std::int64_t serialisation_ns(std::size_t wire_bytes) const;
  bool queue_full(std::size_t wire_bytes) const;
  bool policed(std::int64_t arrival_ns, std::size_t wire_bytes);
  // When a packet that may start at `start_ns` has all of its bytes delivered by the trace.
  std::int64_t trace_departure(std::int64_t start_ns, bool was_waiting, std::size_t wire_bytes);
  std::int64_t opportunity_ns(const Opportunity& o) const;
  Opportunity first_opportunity_at_or_after(std::int64_t t_ns) const;
  Opportunity next(Opportunity o) const;
  double schedule_ms(std::int64_t t_ns) const;

  DirectionConfig config_;
  std::deque<Waiting> waiting_;
  std::uint64_t waiting_bytes_ = 0;
  // The transmitter is serialising until then (none yet: before any time offer() is given).
  std::int64_t busy_until_ns_ = std::numeric_limits<std::int64_t>::min();
  std::int64_t last_arrival_ns_ = 0;
  double tokens_ = 0;
  std::int64_t tokens_at_ns_ = 0;
  double uniform();      // in [0, 1), the next draw of the direction's stream
  std::uint64_t draws_;  // the stream's counter, started from the seed
  std::int64_t origin_ns_ = 0;
  // The trace's opportunity that delivered the last packet's last bytes, and what it had left,
  // which only a packet already waiting then may use.
  Opportunity last_used_;
  std::uint32_t left_in_last_used_ = 0;
};

}  // namespace tb::link
