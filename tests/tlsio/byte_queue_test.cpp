#include "twinbench/tlsio/byte_queue.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace {

using tb::tlsio::ByteQueue;

std::vector<std::byte> bytes_from(std::size_t first, std::size_t n) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((first + i) % 251);
  return v;
}

// The queue's bytes must be the sequence next, next+1, ... (mod 251).
void expect_sequence(const ByteQueue& q, std::size_t next) {
  const auto d = q.data();
  for (std::size_t i = 0; i < d.size(); ++i)
    ASSERT_EQ(d[i], static_cast<std::byte>((next + i) % 251)) << "at " << i;
}

TEST(ByteQueue, KeepsOrderThroughGrowthAndReuse) {
  ByteQueue q;
  std::size_t written = 0, read = 0;
  // Uneven appends and consumes, so the held bytes sit at every offset when space runs out.
  for (int round = 0; round < 200; ++round) {
    const std::size_t in = 1 + (round * 37) % 700;
    q.append(bytes_from(written, in));
    written += in;
    expect_sequence(q, read);
    const std::size_t out = (round * 53) % 650;
    const std::size_t taken = std::min(out, q.size());
    q.consume(out);
    read += taken;
    ASSERT_EQ(q.size(), written - read);
    expect_sequence(q, read);
  }
  q.consume(q.size() + 10);  // more than it holds: just empties it
  EXPECT_TRUE(q.empty());
}

TEST(ByteQueue, PrepareGivesRoomAtTheBackAndCommitKeepsOnlyWhatWasWritten) {
  ByteQueue q;
  q.append(bytes_from(0, 5));
  auto room = q.prepare(100);
  ASSERT_EQ(room.size(), 100u);
  const auto more = bytes_from(5, 3);
  std::memcpy(room.data(), more.data(), more.size());
  q.commit(3);  // 3 of the 100 written
  ASSERT_EQ(q.size(), 8u);
  expect_sequence(q, 0);
  q.consume(8);
  EXPECT_TRUE(q.empty());
  // Drained: the next bytes start again at the front of the same storage.
  const std::byte* front = q.prepare(1).data();
  q.append(bytes_from(0, 1));
  EXPECT_EQ(q.data().data(), front);
}

TEST(ByteQueue, ACommitCountsNoMoreThanThePreparedRoom) {
  ByteQueue q;
  const auto room = q.prepare(4);
  const auto bytes = bytes_from(0, 4);
  std::memcpy(room.data(), bytes.data(), bytes.size());
  q.commit(1000);  // a reader that claims more than it was given room for
  EXPECT_EQ(q.size(), 4u);
  expect_sequence(q, 0);
  q.commit(10);  // no room prepared since: nothing
  EXPECT_EQ(q.size(), 4u);
}

TEST(ByteQueue, AMovedFromQueueIsEmptyAndUsable) {
  ByteQueue a;
  a.append(bytes_from(0, 100));
  ByteQueue b(std::move(a));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): its state after a move is defined
  ASSERT_EQ(b.size(), 100u);
  expect_sequence(b, 0);
  a.append(bytes_from(3, 5));
  expect_sequence(a, 3);
  ByteQueue c;
  c.append(bytes_from(50, 7));
  c = std::move(b);
  ASSERT_EQ(c.size(), 100u);
  expect_sequence(c, 0);
  EXPECT_TRUE(b.empty());  // NOLINT(bugprone-use-after-move)
}

TEST(ByteQueue, SwapExchangesContentsAndClearEmpties) {
  ByteQueue a, b;
  a.append(bytes_from(10, 20));
  b.append(bytes_from(0, 3));
  a.swap(b);
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(b.size(), 20u);
  expect_sequence(a, 0);
  expect_sequence(b, 10);
  b.clear();
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.size(), 0u);
}

}  // namespace
