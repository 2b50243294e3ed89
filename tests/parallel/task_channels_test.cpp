// The pipes between the processes of one simulated run (app/task_channels.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "twinbench/parallel/fork_pool.hpp"
#include "twinbench/sim/task_channels.hpp"

namespace tb {
namespace {

twinbench::Sample sample(std::uint32_t round, std::uint64_t frames, const std::string& error = "") {
  twinbench::Sample s;
  s.set_scenario("file_download");
  s.set_variant("c3_coop");
  s.set_fps(60);
  s.set_body_bytes(1u << 20);
  s.set_round(round);
  s.set_frames(frames);
  s.set_elapsed_ms(frames * 16.667);
  s.set_result(error.empty() ? "success" : "cancelled");
  s.set_error(error);
  return s;
}

runner::StepKey step(std::uint32_t round) {
  return runner::StepKey{"c3_coop", 60, 1u << 20, round};
}

TEST(SpanFeed, GivesEachStepItsSpanWhateverOrderItIsAskedIn) {
  sim::SpanFeed feed;
  feed.add(sample(0, 20));
  feed.add(sample(1, 21));
  feed.add(sample(2, 22, "timed out"));
  feed.finish();  // a lost or misframed span is then an error here, not a read that waits
  EXPECT_EQ(feed.span_of_step(step(1)).frames, 21u);
  EXPECT_EQ(feed.span_of_step(step(0)).frames, 20u);
  const auto timed_out = feed.span_of_step(step(2));
  EXPECT_EQ(timed_out.frames, 22u);
  EXPECT_TRUE(timed_out.timed_out);
}

TEST(SpanFeed, AFeedThatEndsWithoutTheStepIsAnErrorNotAHang) {
  sim::SpanFeed feed;
  feed.add(sample(0, 20));
  feed.finish();  // a task failed: nothing more comes
  EXPECT_EQ(feed.span_of_step(step(0)).frames, 20u);
  try {
    feed.span_of_step(step(1));
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("c3_coop's step in round 1"), std::string::npos)
        << e.what();
  }
}

TEST(SpanFeed, MoreThanThePipeHoldsWaitsInTheWriterAndArrivesWhole) {
  // 20000 spans (~600 KB) is ten times a pipe's buffer: the writer keeps what the pipe does not
  // take and writes it when asked to flush, as the parent does while its children run.
  constexpr std::uint32_t kSteps = 20000;
  sim::SpanFeed feed;
  for (std::uint32_t r = 0; r < kSteps; ++r) feed.add(sample(r, r % 97));
  feed.finish();
  std::atomic<bool> reading{true};
  std::thread parent([&] {
    // The writer gives up after 10 s; a reader left waiting then is ended by ctest's test timeout.
    for (int i = 0; reading && i < 100000; ++i) {
      feed.flush();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  std::uint32_t right = 0;
  for (std::uint32_t r = 0; r < kSteps; ++r)
    right += feed.span_of_step(step(r)).frames == r % 97 ? 1 : 0;
  reading = false;
  parent.join();
  EXPECT_EQ(right, kSteps);
}

// As SimulationPool wires them: a child waits for a span that a failed child never sent. The parent
// ends the feed when it learns of the failure; the waiting child sees the end (no other child
// holds the feed's write end) and fails too, instead of waiting for ever.
TEST(SpanFeed, AChildWaitingOnAFailedOneSeesTheFeedEnd) {
  sim::SpanFeed feed;
  std::vector<std::pair<std::size_t, bool>> ended;
  const auto failed = parallel::run_forked(
      2, 2,
      [&](std::size_t i) {
        feed.keep_in_child(/*reader=*/i == 1);
        if (i == 0) return 3;  // the task the other waits for fails before recording anything
        ::alarm(10);           // a feed that never ends kills this child (a failure), not hangs
        try {
          feed.span_of_step(step(0));
          return 5;  // a span that was never sent
        } catch (const std::runtime_error&) {
          return 0;  // the end of the feed, seen: what this test expects
        }
      },
      [&](std::size_t i, bool ok) {
        ended.emplace_back(i, ok);
        if (!ok) feed.finish();
      },
      [](std::size_t) {
        return std::vector<std::size_t>{0, 1};
      },
      [] { ::usleep(1000); });
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(*failed, 0u);
  EXPECT_EQ(ended, (std::vector<std::pair<std::size_t, bool>>{{0, false}, {1, true}}));
}

TEST(SampleChannel, ASampleTooLongForOneFrameArrivesAsItsStep) {
  sim::SampleChannel channel;
  auto long_one = sample(3, 30);
  long_one.set_scenario(std::string(8000, 's'));  // one write() is atomic only up to PIPE_BUF
  channel.send(7, sample(2, 20, std::string(5000, 'e')));
  channel.send(7, long_one);
  std::vector<twinbench::Sample> got;
  channel.receive(1000, [&](std::size_t task, const twinbench::Sample& s) {
    EXPECT_EQ(task, 7u);
    got.push_back(s);
  });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].error().size(), 512u);  // the head of a long error
  EXPECT_EQ(runner::step_of(got[1]), step(3));
  EXPECT_EQ(runner::span_of(got[1]).frames, 30u);
}

}  // namespace
}  // namespace tb
