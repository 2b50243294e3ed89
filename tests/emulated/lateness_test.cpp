// The emulator's lateness report: how late its packets left, both directions pooled.
#include "twinbench/emulated/link_emulator.hpp"

#include <gtest/gtest.h>

namespace tb::emulated {
namespace {

// Both directions' packets together, with twinbench's one quantile: 1..100 us and one on time.
TEST(LatenessSummary, PoolsBothDirectionsUnderTheOneQuantile) {
  DirectionStats up, down;
  for (int us = 1; us <= 50; ++us) up.lateness_ns.push_back(us * 1000);
  for (int us = 100; us > 50; --us) down.lateness_ns.push_back(us * 1000);
  down.lateness_ns.push_back(0);
  const LatenessSummary s = summarize_lateness({&up, &down});
  EXPECT_EQ(s.packets, 101u);
  EXPECT_DOUBLE_EQ(s.p50_us, 50);  // position 50 of 0, 1, ..., 100
  EXPECT_DOUBLE_EQ(s.p99_us, 99);  // position 99
  EXPECT_DOUBLE_EQ(s.max_us, 100);
  // 1 and 2 us: position 0.99 lies between them.
  DirectionStats two;
  two.lateness_ns = {2000, 1000};
  EXPECT_DOUBLE_EQ(summarize_lateness({&two}).p99_us, 1.99);
}

}  // namespace
}  // namespace tb::emulated
