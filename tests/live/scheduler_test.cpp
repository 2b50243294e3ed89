// RealtimeScheduler, StdThreads and the file sinks. Timing checks are only generous upper bounds
// that prove a wake-up happened early, never speed.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "twinbench/live/file_sink.hpp"
#include "twinbench/live/realtime_scheduler.hpp"
#include "twinbench/live/std_threads.hpp"
#include "twinbench/live/wakeup_lateness.hpp"
#include "support/child_process.hpp"

namespace tb::live {
namespace {

using namespace std::chrono_literals;

TEST(RealtimeScheduler, RunsEventsInTimeThenInsertionOrder) {
  RealtimeScheduler s;
  std::vector<std::string> order;
  const Time t0 = s.now();
  s.schedule_at(t0 + 6ms, [&] { order.push_back("late"); });
  s.schedule_at(t0 + 2ms, [&] { order.push_back("tie-1"); });
  s.schedule_at(t0 + 2ms, [&] { order.push_back("tie-2"); });
  s.schedule_in(0ms, [&] {
    order.push_back("now");
    // In the past: runs right after this event, before the later ones.
    s.schedule_at(Time::zero(), [&] { order.push_back("past"); });
  });
  s.schedule_at(t0 + 2ms, [&] { order.push_back("tie-3"); });
  ASSERT_TRUE(s.run_until([&] { return order.size() == 6; }, 10s));
  EXPECT_EQ(order, (std::vector<std::string>{"now", "past", "tie-1", "tie-2", "tie-3", "late"}));
  EXPECT_GE(s.now(), t0 + 6ms);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(RealtimeScheduler, TimesOutWhenNotDone) {
  RealtimeScheduler s;
  bool ran = false;
  s.schedule_in(1h, [&] { ran = true; });
  const Time start = s.now();
  EXPECT_FALSE(s.run_until([] { return false; }, 20ms));
  EXPECT_GE(s.now() - start, 20ms);
  EXPECT_LT(s.now() - start, 10s);
  EXPECT_FALSE(ran);
  EXPECT_EQ(s.pending(), 1u);
}

TEST(RealtimeScheduler, PostFromAnotherThreadWakesASleeper) {
  RealtimeScheduler s;
  s.schedule_in(1h, [] {});  // the sleeper's next deadline is far away
  std::atomic<bool> ran_on_main{false};
  const auto main_id = std::this_thread::get_id();
  std::thread poster([&] {
    std::this_thread::sleep_for(30ms);
    s.post([&] { ran_on_main = std::this_thread::get_id() == main_id; });
  });
  const Time start = s.now();
  const bool done = s.run_until([&] { return ran_on_main.load(); }, 60s);
  poster.join();
  EXPECT_TRUE(done);
  EXPECT_LT(s.now() - start, 10s);  // woke long before the timeout or the 1 h event
}

TEST(RealtimeScheduler, PostedWorkRunsInOrderAndSurvivesAnEarlyReturn) {
  RealtimeScheduler s;
  std::vector<int> order;
  for (int i = 0; i < 4; ++i) s.post([&order, i] { order.push_back(i); });
  ASSERT_TRUE(s.run_until([&] { return order.size() == 2; }, 10s));
  ASSERT_TRUE(s.run_until([&] { return order.size() == 4; }, 10s));
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
}

TEST(RealtimeScheduler, NowIsMonotonic) {
  RealtimeScheduler s;
  Time last = s.now();
  EXPECT_GE(last, Time::zero());
  for (int i = 0; i < 1000; ++i) {
    const Time t = s.now();
    EXPECT_GE(t, last);
    last = t;
  }
}

TEST(StdThreads, IteratesUntilDoneThenDies) {
  StdThreads threads;
  std::atomic<int> iterations{0};
  std::atomic<bool> release{false};
  auto worker = threads.start(
      [&] {
        ++iterations;
        return release.load() && iterations >= 5;
      },
      100us);
  EXPECT_TRUE(worker->alive());
  std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(worker->alive());  // still looping: iteration() keeps returning false
  release = true;
  const auto end = std::chrono::steady_clock::now() + 10s;
  while (worker->alive() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(1ms);
  EXPECT_FALSE(worker->alive());
  worker->join();
  const int final_count = iterations.load();
  EXPECT_GE(final_count, 5);
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(iterations.load(), final_count);  // no iteration after the one returning true
}

TEST(StdThreads, ZeroSleepYieldsAndDestructorJoins) {
  StdThreads threads;
  std::atomic<int> iterations{0};
  {
    auto worker = threads.start([&] { return ++iterations == 1000; }, Duration::zero());
  }  // destroyed without join(): the destructor waits for the loop to finish
  EXPECT_EQ(iterations.load(), 1000);
}

TEST(WakeupLateness, QuantilesAreTheRankedWakeupsInWholeMicroseconds) {
  WakeupLateness lateness;
  EXPECT_EQ(lateness.summary().wakeups, 0u);
  // 1..100 us, one each, in no order; plus an early one (counted as on time).
  for (int us = 100; us >= 1; --us) lateness.record(std::chrono::microseconds(us) + 400ns);
  lateness.record(-5us);
  const WakeupSummary s = lateness.summary();
  EXPECT_EQ(s.wakeups, 101u);
  EXPECT_EQ(s.p50_us, 50);  // the 51st of 101: 0, 1, ..., 50
  EXPECT_EQ(s.p99_us, 99);  // the 100th
  EXPECT_DOUBLE_EQ(s.max_us, 100.4);
}

TEST(WakeupLateness, ALateWakeupBeyondTheBinsKeepsItsExactMaximum) {
  WakeupLateness lateness;
  lateness.record(3s);
  const WakeupSummary s = lateness.summary();
  EXPECT_EQ(s.wakeups, 1u);
  EXPECT_DOUBLE_EQ(s.max_us, 3e6);
  EXPECT_DOUBLE_EQ(s.p99_us, 3e6);  // the last bin stands for "at least"; the maximum says how much
}

TEST(WakeupLateness, ThreadsRecordWithoutLosingAny) {
  WakeupLateness lateness;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10'000; ++i) lateness.record(std::chrono::microseconds(t));
    });
  for (auto& t : threads) t.join();
  const WakeupSummary s = lateness.summary();
  EXPECT_EQ(s.wakeups, 40'000u);
  EXPECT_EQ(s.p50_us, 1.5);  // halfway between the 20,000th wake-up (1 us) and the next (2 us)
  EXPECT_EQ(s.max_us, 3);
}

TEST(RealtimeScheduler, RecordsItsWakeupsForTimedEventsButNotForPostedWork) {
  WakeupLateness lateness;
  RealtimeScheduler s(&lateness);
  int ran = 0;
  // The second event is scheduled by the first, so it is always a sleep of its own, however late
  // the first wake-up came.
  s.schedule_in(2ms, [&] {
    ++ran;
    s.schedule_in(2ms, [&] { ++ran; });
  });
  ASSERT_TRUE(s.run_until([&] { return ran == 2; }, 10s));
  EXPECT_EQ(lateness.summary().wakeups, 2u);  // it slept twice, once for each
  // A timed event due before the run's timeout: only the post, not the deadline, stops it from
  // counting as a timed wake-up.
  s.schedule_in(5s, [] {});
  std::thread poster([&] {
    std::this_thread::sleep_for(10ms);
    s.post([&] { ++ran; });
  });
  ASSERT_TRUE(s.run_until([&] { return ran == 3; }, 10s));
  poster.join();
  EXPECT_EQ(lateness.summary().wakeups, 2u);  // woken by the post, not by a due time
  EXPECT_FALSE(s.run_until([] { return false; }, 5ms));
  EXPECT_EQ(lateness.summary().wakeups, 2u);  // the run's own timeout is not a wake-up for work
}

TEST(StdThreads, RecordsEachSleepOfAWorker) {
  WakeupLateness lateness;
  StdThreads threads(&lateness);
  std::atomic<int> iterations{0};
  threads.start([&] { return ++iterations == 4; }, 200us)->join();
  EXPECT_EQ(lateness.summary().wakeups, 3u);  // a sleep between each two iterations
  threads.start([&] { return ++iterations == 8; }, Duration::zero())->join();
  EXPECT_EQ(lateness.summary().wakeups, 3u);  // a yield is no timed wake-up
}


std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s)); }

TEST(FileSink, WritesAndTruncatesFilesInATempDir) {
  std::filesystem::path where;
  {
    TempDir dir;
    where = dir.path();
    ASSERT_TRUE(std::filesystem::is_directory(where));
    FileSinkFactory files(dir.path());

    auto sink = files.open("body.bin");
    ASSERT_NE(sink, nullptr);
    EXPECT_TRUE(sink->write(bytes_of("hello, ")));
    EXPECT_TRUE(sink->write(bytes_of("world")));
    EXPECT_TRUE(sink->finish());
    EXPECT_FALSE(sink->write(bytes_of("late")));  // closed
    EXPECT_EQ(testing::file_text(where / "body.bin"), "hello, world");

    auto again = files.open("body.bin");  // truncates
    ASSERT_NE(again, nullptr);
    EXPECT_TRUE(again->write(bytes_of("x")));
    EXPECT_TRUE(again->finish());
    EXPECT_EQ(testing::file_text(where / "body.bin"), "x");

    EXPECT_EQ(files.open("missing-dir/body.bin"), nullptr);
  }
  EXPECT_FALSE(std::filesystem::exists(where));  // removed with its contents
}

TEST(FileSink, TempDirsAreUnique) {
  TempDir a;
  TempDir b("twinbench-test-");
  EXPECT_NE(a.path(), b.path());
  EXPECT_NE(b.path().filename().string().find("twinbench-test-"), std::string::npos);
}

}  // namespace
}  // namespace tb::live
