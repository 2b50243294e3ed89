// The pool of forked children that runs simulation tasks (parallel/src/fork_pool.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "twinbench/parallel/fork_pool.hpp"

namespace tb {
namespace {

// Each child holds an exclusive lock file for 30 ms: a second child at once fails to create it.
TEST(ForkPool, TasksRunInIndexOrderAtMostJobsAtOnce) {
  const std::string lock = ::testing::TempDir() + "fork_pool_lock_" + std::to_string(::getpid());
  std::vector<std::size_t> finished;
  const auto failed = parallel::run_forked(
      3, 1,
      [&](std::size_t) {
        const int fd = ::open(lock.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
        if (fd < 0) return 4;  // another task is running
        ::usleep(30000);
        ::close(fd);
        ::unlink(lock.c_str());
        return 0;
      },
      [&](std::size_t i, bool ok) {
        EXPECT_TRUE(ok) << i;
        finished.push_back(i);
      });
  ::unlink(lock.c_str());
  EXPECT_FALSE(failed.has_value());
  EXPECT_EQ(finished, (std::vector<std::size_t>{0, 1, 2}));
}

// With jobs = 2, each child takes one of two exclusive lock files for 30 ms: a third child running
// at once finds both taken.
TEST(ForkPool, NeverMoreThanJobsAtOnce) {
  const std::string base = ::testing::TempDir() + "fork_pool_slot_" + std::to_string(::getpid());
  const std::string slots[] = {base + "_a", base + "_b"};
  std::vector<bool> ok_by_task(5, false);
  const auto failed = parallel::run_forked(
      5, 2,
      [&](std::size_t) {
        for (const auto& slot : slots) {
          const int fd = ::open(slot.c_str(), O_CREAT | O_EXCL | O_WRONLY, 0600);
          if (fd < 0) continue;
          ::usleep(30000);
          ::close(fd);
          ::unlink(slot.c_str());
          return 0;
        }
        return 4;  // both slots taken: a third task is running
      },
      [&](std::size_t i, bool ok) { ok_by_task[i] = ok; });
  for (const auto& slot : slots) ::unlink(slot.c_str());
  EXPECT_FALSE(failed.has_value());
  EXPECT_EQ(ok_by_task, std::vector<bool>(5, true));
}

// Two children that each wait for a byte from the other: they finish only if they run at once.
TEST(ForkPool, AGroupStartsTogetherBeyondJobs) {
  int to_0[2];
  int to_2[2];
  ASSERT_EQ(::pipe(to_0), 0);
  ASSERT_EQ(::pipe(to_2), 0);
  const auto exchange = [](int write_fd, int read_fd) {
    const char byte = 'x';
    if (::write(write_fd, &byte, 1) != 1) return 4;
    pollfd ready{read_fd, POLLIN, 0};
    return ::poll(&ready, 1, 5000) == 1 ? 0 : 5;  // bounded: a lone child fails instead of hanging
  };
  std::vector<std::size_t> finished;
  const auto failed = parallel::run_forked(
      3, 1,
      [&](std::size_t i) {
        if (i == 0) return exchange(to_2[1], to_0[0]);
        if (i == 2) return exchange(to_0[1], to_2[0]);
        return 0;
      },
      [&](std::size_t i, bool ok) {
        EXPECT_TRUE(ok) << i;
        finished.push_back(i);
      },
      [](std::size_t i) {
        return i == 0 ? std::vector<std::size_t>{0, 2} : std::vector<std::size_t>{};
      });
  for (int fd : {to_0[0], to_0[1], to_2[0], to_2[1]}) ::close(fd);
  EXPECT_FALSE(failed.has_value());
  EXPECT_EQ(finished.size(), 3u);
  EXPECT_EQ(finished.back(), 1u);  // started once the group of two had ended
}

TEST(ForkPool, AFailureStopsNewLaunches) {
  std::vector<std::size_t> finished;
  const auto failed = parallel::run_forked(
      4, 1, [](std::size_t i) { return i == 1 ? 3 : 0; },
      [&](std::size_t i, bool) { finished.push_back(i); });
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, 1u);
  EXPECT_EQ(finished, (std::vector<std::size_t>{0, 1}));  // 2 and 3 were never started
}

}  // namespace
}  // namespace tb
