// The pool of forked children that runs simulation units (app/fork_pool.cpp).
#include <gtest/gtest.h>

#include <vector>

#include "fork_pool.hpp"

namespace tb {
namespace {

TEST(ForkPool, ATaskStartsOnlyOnceReadyAndTheRestRunInIndexOrder) {
  // Task 0 waits for task 2; with two at once, 1 and 2 start first, and 0 only after 2 is done.
  std::vector<std::size_t> finished;
  const auto failed = app::run_forked(
      3, 2, [](std::size_t) { return 0; },
      [&](std::size_t i, bool ok) {
        EXPECT_TRUE(ok);
        finished.push_back(i);
      },
      [&](std::size_t i) {
        if (i != 0) return true;
        for (auto f : finished) {
          if (f == 2) return true;
        }
        return false;
      });
  EXPECT_FALSE(failed.has_value());
  ASSERT_EQ(finished.size(), 3u);
  EXPECT_EQ(finished.back(), 0u);
}

TEST(ForkPool, AFailureStopsNewLaunchesAndTasksNeverReadyAreLeft) {
  std::vector<std::size_t> finished;
  const auto failed = app::run_forked(
      4, 1, [](std::size_t i) { return i == 1 ? 3 : 0; },
      [&](std::size_t i, bool) { finished.push_back(i); });
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, 1u);
  EXPECT_EQ(finished, (std::vector<std::size_t>{0, 1}));  // 2 and 3 were never started

  finished.clear();
  const auto none = app::run_forked(
      2, 2, [](std::size_t) { return 0; }, [&](std::size_t i, bool) { finished.push_back(i); },
      [](std::size_t i) { return i == 0; });
  EXPECT_FALSE(none.has_value());
  EXPECT_EQ(finished, (std::vector<std::size_t>{0}));
}

}  // namespace
}  // namespace tb
