// The link model's links that change over time, on virtual time: Mahimahi's delivery-trace
// semantics (byte accounting, lost opportunities, looping), and the delay and loss schedules.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "twinbench/link/link_direction.hpp"
#include "twinbench/scenario/delivery_trace.hpp"

namespace tb::link {
namespace {

constexpr std::int64_t kMillisecond = 1'000'000;

DirectionConfig with_trace(std::vector<std::uint32_t> trace_ms, double delay_ms = 0) {
  DirectionConfig c;
  c.trace_ms = std::move(trace_ms);
  c.delay_ms = delay_ms;
  c.queue.packets = 1000;
  return c;
}

// One opportunity each ms for a second: 1504 bytes a ms, 12.032 Mbit/s.
std::vector<std::uint32_t> every_ms(std::uint32_t from, std::uint32_t to) {
  std::vector<std::uint32_t> out(to - from + 1);
  std::iota(out.begin(), out.end(), from);
  return out;
}

TEST(LinkTrace, AConstantRateTraceDeliversWithinAMillisecondOfTheEqualConstantLink) {
  const std::vector<std::uint32_t> trace = every_ms(1, 1000);
  const double mbps = scenario::trace_mean_mbps(trace);
  EXPECT_DOUBLE_EQ(mbps, 1504.0 * 8 / 1000);
  LinkDirection traced(with_trace(trace, 20));
  DirectionConfig constant;
  constant.mbps = mbps;
  constant.delay_ms = 20;
  constant.queue.packets = 1000;
  LinkDirection reference(constant);
  // 900 back-to-back full-size packets: the trace's ms quantisation moves none of them by more
  // than the millisecond its format has, and none earlier than the rate allows plus that ms.
  for (int i = 0; i < 900; ++i) {
    const Verdict t = traced.offer(0, 1500);
    const Verdict r = reference.offer(0, 1500);
    ASSERT_EQ(t.fate, Fate::kDelivered);
    EXPECT_LE(std::llabs(t.due_ns - r.due_ns), kMillisecond) << "packet " << i;
  }
}

TEST(LinkTrace, SmallPacketsShareAnOpportunityByTheirBytes) {
  LinkDirection link(with_trace({5, 10}));
  // Ten 100-byte packets: 1020 bytes with their link headers, within one opportunity's 1504.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(link.offer(0, 100).due_ns, 5 * kMillisecond);
  // What is left of it (484 bytes) goes to the next packet already waiting; a 1500-byte one needs
  // the rest from the next opportunity.
  EXPECT_EQ(link.offer(0, 1500).due_ns, 10 * kMillisecond);
}

TEST(LinkTrace, APacketLargerThanWhatIsLeftTakesTheNextOpportunity) {
  LinkDirection link(with_trace(every_ms(1, 100)));
  EXPECT_EQ(link.offer(0, 1500).due_ns, 1 * kMillisecond);  // 1502 of 1504 bytes
  EXPECT_EQ(link.offer(0, 1500).due_ns, 2 * kMillisecond);  // 2 + 1500 bytes
  EXPECT_EQ(link.offer(0, 1500).due_ns, 3 * kMillisecond);  // 4 + 1498 bytes
}

TEST(LinkTrace, OpportunitiesWithNothingWaitingAreLostNotBanked) {
  LinkDirection link(with_trace(every_ms(1, 100)));
  // Ten opportunities passed unused: a packet arriving at 10.5 ms takes the one at 11 ms, and the
  // next packet behind it the one at 12 ms.
  EXPECT_EQ(link.offer(10 * kMillisecond + kMillisecond / 2, 1500).due_ns, 11 * kMillisecond);
  EXPECT_EQ(link.offer(10 * kMillisecond + kMillisecond / 2, 1500).due_ns, 12 * kMillisecond);
}

TEST(LinkTrace, WhatAnOpportunityLeftIsLostToAPacketThatArrivesLater) {
  LinkDirection link(with_trace(every_ms(1, 100)));
  EXPECT_EQ(link.offer(0, 100).due_ns, 1 * kMillisecond);
  // The queue was empty after it: the 1402 bytes left at 1 ms are gone for a packet at 1.5 ms.
  EXPECT_EQ(link.offer(kMillisecond + kMillisecond / 2, 100).due_ns, 2 * kMillisecond);
  // A packet arriving in the very instant of an opportunity can use it.
  EXPECT_EQ(link.offer(3 * kMillisecond, 100).due_ns, 3 * kMillisecond);
}

TEST(LinkTrace, TheTraceLoopsWithItsLastTimeAsItsPeriod) {
  // Opportunities at 10 and 20 ms, then 30 and 40, 50 and 60, ...
  LinkDirection link(with_trace({10, 20}));
  EXPECT_EQ(link.offer(41 * kMillisecond, 1500).due_ns, 50 * kMillisecond);
  EXPECT_EQ(link.offer(1000 * kMillisecond, 1500).due_ns, 1010 * kMillisecond);
  // A trace starting at 0: the next loop's first line falls on the last line's time, so each
  // period boundary has two opportunities (Mahimahi adds the last time to the loop's base).
  LinkDirection twice(with_trace({0, 20}));
  EXPECT_EQ(twice.offer(15 * kMillisecond, 1500).due_ns, 20 * kMillisecond);
  EXPECT_EQ(twice.offer(15 * kMillisecond, 1500).due_ns, 20 * kMillisecond);
  EXPECT_EQ(twice.offer(15 * kMillisecond, 1500).due_ns, 40 * kMillisecond);
}

TEST(LinkTrace, AnOutageInTheTraceHoldsPacketsUntilItEnds) {
  // 1 opportunity a ms, none from 101 to 400 ms: a 300 ms outage.
  std::vector<std::uint32_t> trace = every_ms(1, 100);
  const std::vector<std::uint32_t> after = every_ms(401, 1000);
  trace.insert(trace.end(), after.begin(), after.end());
  LinkDirection link(with_trace(trace, 20));
  EXPECT_EQ(link.offer(150 * kMillisecond, 1500).due_ns, (401 + 20) * kMillisecond);
  EXPECT_EQ(link.offer(160 * kMillisecond, 1500).due_ns, (402 + 20) * kMillisecond);
}

TEST(LinkTrace, TheQueueLimitHoldsWithATrace) {
  DirectionConfig c = with_trace(every_ms(1, 100));
  c.queue.packets = 2;
  LinkDirection link(c);
  EXPECT_EQ(link.offer(0, 1500).fate, Fate::kDelivered);  // being delivered
  EXPECT_EQ(link.offer(0, 1500).fate, Fate::kDelivered);  // waiting
  EXPECT_EQ(link.offer(0, 1500).fate, Fate::kDelivered);  // waiting
  EXPECT_EQ(link.offer(0, 1500).fate, Fate::kQueueFull);
  // Once the first is delivered (1 ms) the second is, and there is room for one more.
  EXPECT_EQ(link.offer(kMillisecond + 1, 1500).fate, Fate::kDelivered);
  EXPECT_EQ(link.offer(kMillisecond + 1, 1500).fate, Fate::kQueueFull);
}

TEST(LinkTrace, TheOriginMovesTheTraceNotThePackets) {
  LinkDirection link(with_trace({10, 20}));
  link.set_origin(1000 * kMillisecond);
  EXPECT_EQ(link.offer(1000 * kMillisecond, 1500).due_ns, 1010 * kMillisecond);
  // Before the origin the trace has not begun: its first opportunity is the first there is.
  LinkDirection early(with_trace({10, 20}));
  early.set_origin(1000 * kMillisecond);
  EXPECT_EQ(early.offer(0, 1500).due_ns, 1010 * kMillisecond);
}

TEST(LinkSchedule, TheDelayChangesForPacketsLeavingAfterItsStep) {
  DirectionConfig c;
  c.mbps = 1000;  // 12 us a packet
  c.queue.packets = 100;
  c.delay_ms = 10;
  c.delay_schedule = {{100, 50}};
  LinkDirection link(c);
  const std::int64_t serialised = 12'016;  // 1502 bytes at 1000 Mbit/s
  EXPECT_EQ(link.offer(50 * kMillisecond, 1500).due_ns, 60 * kMillisecond + serialised);
  EXPECT_EQ(link.offer(150 * kMillisecond, 1500).due_ns, 200 * kMillisecond + serialised);
}

TEST(LinkSchedule, AFallingDelayNeverLetsAPacketOvertakeTheOneBefore) {
  DirectionConfig c;
  c.mbps = 1000;
  c.queue.packets = 100;
  c.delay_ms = 50;
  c.delay_schedule = {{100, 10}};
  LinkDirection link(c);
  const Verdict before = link.offer(99 * kMillisecond, 1500);  // due ~149 ms
  const Verdict after = link.offer(101 * kMillisecond, 1500);  // 111 ms by its delay
  EXPECT_GT(before.due_ns, 149 * kMillisecond);
  EXPECT_EQ(after.due_ns, before.due_ns);
}

TEST(LinkSchedule, ALossScheduleDropsEverythingInAnOutageAndNothingAfter) {
  DirectionConfig c;
  c.mbps = 100;
  c.queue.packets = 1000;
  c.loss_schedule = {{100, 1.0}, {400, 0.0}};
  LinkDirection link(c);
  for (std::int64_t ms = 0; ms < 600; ms += 5) {
    const Verdict v = link.offer(ms * kMillisecond, 1500);
    const bool in_outage = ms >= 100 && ms < 400;
    EXPECT_EQ(v.fate, in_outage ? Fate::kLost : Fate::kDelivered) << "at " << ms << " ms";
  }
}

TEST(LinkSchedule, AScheduleKeepsItsLastValue) {
  const std::vector<scenario::ScheduleStep> steps{{100, 2}, {200, 3}};
  EXPECT_EQ(scenario::scheduled_value(steps, 1, 0), 1);
  EXPECT_EQ(scenario::scheduled_value(steps, 1, 99.9), 1);
  EXPECT_EQ(scenario::scheduled_value(steps, 1, 100), 2);
  EXPECT_EQ(scenario::scheduled_value(steps, 1, 199), 2);
  EXPECT_EQ(scenario::scheduled_value(steps, 1, 1e9), 3);
}

}  // namespace
}  // namespace tb::link
