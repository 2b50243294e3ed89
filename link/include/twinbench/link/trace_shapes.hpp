#pragma once
// Delivery traces of the shapes a mobile path takes, generated from a seed (`twinbench trace`):
// a rate in Mbit/s for each millisecond, turned into Mahimahi's format. Only integer and IEEE
// arithmetic (no <random> distributions, no libm), so a shape and seed give the same file on any
// machine.
#include <cstdint>
#include <string>
#include <vector>

namespace tb::link {

enum class ShapeKind {
  kSteps,  // step_mbps in turn, each for step_ms
  kWalk,   // a random walk between min and max, with outages (rate 0) of outage_ms
  kFade,   // a triangle wave from max down to min and back, period_ms long
};

struct TraceShape {
  ShapeKind kind = ShapeKind::kSteps;
  std::uint32_t duration_ms = 10'000;  // the trace's period (it loops)
  std::vector<double> step_mbps;       // steps
  double step_ms = 1000;               // steps
  double min_mbps = 1;                 // walk, fade
  double max_mbps = 50;                // walk, fade
  double walk_step_mbps = 2;           // walk: the largest change per 100 ms
  double outage_every_ms = 0;          // walk: one outage on average this often (0: none)
  double outage_ms = 300;              // walk
  double period_ms = 4000;             // fade
  std::uint64_t seed = 1;              // walk
};

// The shape's rate in each millisecond of its duration, in Mbit/s. Throws tb::InputError on a
// shape that cannot be drawn (no steps, min above max, a duration of 0, ...).
std::vector<double> rate_per_ms(const TraceShape& shape);

// The opportunities that carry those rates: each ms, the bytes its rate gives plus what earlier
// ms left, in whole kTraceOpportunityBytes opportunities stamped with the ms's end. The last ms
// always has one, so the trace's period is its duration.
std::vector<std::uint32_t> opportunities_for(const std::vector<double>& mbps_per_ms);

// A trace file's text: one time per line.
std::string trace_text(const std::vector<std::uint32_t>& opportunities_ms);

}  // namespace tb::link
