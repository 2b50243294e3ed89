// The seeded trace shapes of `twinbench trace`: each rate carried by the opportunities it needs,
// the same trace from the same seed, and shapes that cannot be drawn refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "twinbench/link/trace_shapes.hpp"
#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/input_error.hpp"

namespace tb::link {
namespace {

// The bytes the opportunities of ms [from, to] (1-based, as stamped) can carry, in Mbit/s.
double carried_mbps(const std::vector<std::uint32_t>& trace, std::uint32_t from, std::uint32_t to) {
  const auto n = std::count_if(trace.begin(), trace.end(),
                               [&](std::uint32_t ms) { return ms >= from && ms <= to; });
  return static_cast<double>(n) * scenario::kTraceOpportunityBytes * 8 / ((to - from + 1) * 1e3);
}

TEST(TraceShapes, StepsCarryEachRateForItsStep) {
  TraceShape s;
  s.kind = ShapeKind::kSteps;
  s.step_mbps = {24, 6, 48};
  s.step_ms = 2000;
  s.duration_ms = 6000;
  const auto trace = opportunities_for(rate_per_ms(s));
  // Within an opportunity's worth of bytes over each 2 s step (1504 B in 2 s: 0.006 Mbit/s).
  EXPECT_NEAR(carried_mbps(trace, 1, 2000), 24, 0.01);
  EXPECT_NEAR(carried_mbps(trace, 2001, 4000), 6, 0.01);
  EXPECT_NEAR(carried_mbps(trace, 4001, 6000), 48, 0.01);
  EXPECT_EQ(trace.back(), 6000u);  // the period is the duration
  EXPECT_TRUE(std::is_sorted(trace.begin(), trace.end()));
}

TEST(TraceShapes, AWalkStaysInItsBoundsHasItsOutagesAndDependsOnlyOnItsSeed) {
  TraceShape s;
  s.kind = ShapeKind::kWalk;
  s.min_mbps = 2;
  s.max_mbps = 40;
  s.walk_step_mbps = 4;
  s.outage_every_ms = 2000;
  s.outage_ms = 300;
  s.duration_ms = 60'000;
  s.seed = 5;
  const auto rates = rate_per_ms(s);
  int outage_ms = 0;
  for (const double r : rates) {
    if (r == 0) {
      ++outage_ms;
    } else {
      EXPECT_GE(r, 2);
      EXPECT_LE(r, 40);
    }
  }
  // About 30 outages of 300 ms in a minute; each is whole.
  EXPECT_EQ(outage_ms % 300, 0);
  EXPECT_GE(outage_ms, 10 * 300);
  EXPECT_LE(outage_ms, 60 * 300);
  EXPECT_EQ(rate_per_ms(s), rates);
  TraceShape other = s;
  other.seed = 6;
  EXPECT_NE(rate_per_ms(other), rates);
}

TEST(TraceShapes, AFadeGoesFromItsMaximumToItsMinimumAndBack) {
  TraceShape s;
  s.kind = ShapeKind::kFade;
  s.min_mbps = 2;
  s.max_mbps = 30;
  s.period_ms = 4000;
  s.duration_ms = 8000;
  const auto rates = rate_per_ms(s);
  EXPECT_DOUBLE_EQ(rates[0], 30);
  EXPECT_DOUBLE_EQ(rates[2000], 2);
  EXPECT_DOUBLE_EQ(rates[4000], 30);
  EXPECT_DOUBLE_EQ(rates[1000], 16);
}

TEST(TraceShapes, ATraceIsItsTimesOnePerLineAndReadsBack) {
  const std::vector<std::uint32_t> trace{1, 1, 2, 5};
  EXPECT_EQ(trace_text(trace), "1\n1\n2\n5\n");
  EXPECT_EQ(scenario::parse_delivery_trace(trace_text(trace), "t"), trace);
  // Rates too low to fill an opportunity still give a trace with its period.
  EXPECT_EQ(opportunities_for({0.001, 0.001, 0.001}), (std::vector<std::uint32_t>{3}));
}

TEST(TraceShapes, ShapesThatCannotBeDrawnAreRefused) {
  TraceShape no_steps;
  no_steps.kind = ShapeKind::kSteps;
  EXPECT_THROW(rate_per_ms(no_steps), InputError);
  TraceShape inverted;
  inverted.kind = ShapeKind::kWalk;
  inverted.min_mbps = 10;
  inverted.max_mbps = 5;
  EXPECT_THROW(rate_per_ms(inverted), InputError);
  TraceShape empty;
  empty.step_mbps = {1};
  empty.duration_ms = 0;
  EXPECT_THROW(rate_per_ms(empty), InputError);
}

}  // namespace
}  // namespace tb::link
