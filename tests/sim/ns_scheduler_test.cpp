// NsScheduler::run_until: when it notices that the run is done. The scenario runs use no poll
// (their end comes in one of the scheduler's own events); a condition that only a network event
// changes needs one.
#include <gtest/gtest.h>

#include <ns3/simulator.h>

#include <chrono>

#include "twinbench/sim/ns_scheduler.hpp"

namespace tb::sim {
namespace {

using namespace std::chrono_literals;

// A condition set by a bare ns-3 event at 5 ms (as a packet's arrival would set it), and one of
// the scheduler's own events at 20 ms. Returns when run_until returned, in simulated time.
Time stop_time(Duration poll) {
  const SimulationScope scope(1);
  NsScheduler scheduler;
  bool done = false;
  ns3::Simulator::Schedule(ns3::MilliSeconds(5), [&] { done = true; });
  scheduler.schedule_at(Time(20ms), [] {});
  EXPECT_TRUE(scheduler.run_until([&] { return done; }, 10s, poll));
  return scheduler.now();
}

TEST(NsScheduler, WithoutAPollANetworkOnlyConditionIsSeenAtTheSchedulersNextEvent) {
  EXPECT_EQ(stop_time(Duration::zero()), Time(20ms));
}

TEST(NsScheduler, APollSeesANetworkOnlyConditionWithinThePoll) {
  EXPECT_EQ(stop_time(1ms), Time(5ms));  // the poll at 5 ms runs after the event set before it
  EXPECT_EQ(stop_time(2ms), Time(6ms));
}

TEST(NsScheduler, TheSchedulersOwnEventStopsTheRunAtOnceAndTheDeadlineStillHolds) {
  const SimulationScope scope(1);
  NsScheduler scheduler;
  bool done = false;
  scheduler.schedule_at(Time(3ms), [&] { done = true; });
  EXPECT_TRUE(scheduler.run_until([&] { return done; }, 10s, Duration::zero()));
  EXPECT_EQ(scheduler.now(), Time(3ms));
  EXPECT_FALSE(scheduler.run_until([] { return false; }, 50ms, Duration::zero()));
  EXPECT_EQ(scheduler.now(), Time(53ms));
}

}  // namespace
}  // namespace tb::sim
