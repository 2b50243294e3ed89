#include "twinbench/tlsio/queue_bio.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>

#include <array>
#include <cstring>
#include <string>
#include <string_view>

namespace {

using tb::tlsio::ByteQueue;

std::string_view text(const ByteQueue& q) {
  return {reinterpret_cast<const char*>(q.data().data()), q.size()};
}

TEST(QueueBio, WritesAppendToTheQueueAndReadsTakeFromItsFront) {
  ByteQueue queue;
  BIO* bio = tb::tlsio::make_queue_bio(queue);
  ASSERT_EQ(BIO_write(bio, "hello ", 6), 6);
  ASSERT_EQ(BIO_write(bio, "world", 5), 5);
  EXPECT_EQ(text(queue), "hello world");
  EXPECT_EQ(BIO_ctrl_pending(bio), 11u);
  EXPECT_EQ(BIO_flush(bio), 1);  // libssl flushes after every handshake flight

  std::array<char, 8> out{};
  ASSERT_EQ(BIO_read(bio, out.data(), 8), 8);  // a part
  EXPECT_EQ(std::string_view(out.data(), 8), "hello wo");
  EXPECT_EQ(text(queue), "rld");
  ASSERT_EQ(BIO_read(bio, out.data(), 8), 3);  // the rest, less than asked for
  EXPECT_EQ(std::string_view(out.data(), 3), "rld");
  EXPECT_TRUE(queue.empty());
  BIO_free(bio);
}

TEST(QueueBio, AnEmptyQueueMeansWaitNotEndOfStream) {
  ByteQueue queue;
  BIO* bio = tb::tlsio::make_queue_bio(queue);
  std::array<char, 4> out{};
  EXPECT_EQ(BIO_read(bio, out.data(), 4), -1);  // as a memory BIO with mem_eof_return -1
  EXPECT_TRUE(BIO_should_retry(bio));
  EXPECT_TRUE(BIO_should_read(bio));
  // Bytes that arrive later are read, and the retry flag goes.
  queue.append(std::as_bytes(std::span("ab", 2)));
  EXPECT_EQ(BIO_read(bio, out.data(), 4), 2);
  EXPECT_FALSE(BIO_should_retry(bio));
  BIO_free(bio);
}

// What libssl sees of its BIOs, side by side with the memory BIO the queue BIO replaced (with
// mem_eof_return -1): the same results and retry flags for each write, read, pending and flush.
// (BIO_eof differs: a memory BIO answers 1 when empty; libssl asks only when no retry flag is set,
// which after an empty read never happens with either.)
TEST(QueueBio, AnswersLibsslAsTheMemoryBioDid) {
  ByteQueue queue;
  BIO* ours = tb::tlsio::make_queue_bio(queue);
  BIO* mem = BIO_new(BIO_s_mem());
  BIO_set_mem_eof_return(mem, -1);
  struct Step {
    const char* write;  // or nullptr: a read of `read` bytes
    int read;
  };
  const Step steps[] = {{nullptr, 4}, {"hello ", 0}, {"world", 0}, {nullptr, 8}, {"!", 0},
                        {nullptr, 8}, {nullptr, 8},  {"", 0},      {nullptr, 0}, {nullptr, 3}};
  for (const Step& step : steps) {
    std::array<char, 16> a{}, b{};
    const int r_ours = step.write
                           ? BIO_write(ours, step.write, static_cast<int>(std::strlen(step.write)))
                           : BIO_read(ours, a.data(), step.read);
    const int r_mem = step.write
                          ? BIO_write(mem, step.write, static_cast<int>(std::strlen(step.write)))
                          : BIO_read(mem, b.data(), step.read);
    const std::string what = step.write ? std::string("write \"") + step.write + "\""
                                        : "read " + std::to_string(step.read);
    EXPECT_EQ(r_ours, r_mem) << what;
    if (r_ours > 0 && !step.write) {
      EXPECT_EQ(std::string_view(a.data(), static_cast<std::size_t>(r_ours)),
                std::string_view(b.data(), static_cast<std::size_t>(r_mem)))
          << what;
    }
    EXPECT_EQ(BIO_should_retry(ours), BIO_should_retry(mem)) << what;
    EXPECT_EQ(BIO_should_read(ours), BIO_should_read(mem)) << what;
    EXPECT_EQ(BIO_ctrl_pending(ours), BIO_ctrl_pending(mem)) << what;
    EXPECT_EQ(BIO_ctrl_wpending(ours), BIO_ctrl_wpending(mem)) << what;
  }
  EXPECT_EQ(BIO_flush(ours), BIO_flush(mem));
  BIO_free(ours);
  BIO_free(mem);
}

TEST(QueueBio, FreeingTheBioLeavesTheQueueToItsOwner) {
  ByteQueue queue;
  BIO* bio = tb::tlsio::make_queue_bio(queue);
  ASSERT_EQ(BIO_write(bio, "kept", 4), 4);
  BIO_free(bio);
  EXPECT_EQ(text(queue), "kept");  // still there and usable (ASan would see a double free)
  queue.append(std::as_bytes(std::span("!", 1)));
  EXPECT_EQ(text(queue), "kept!");
}

}  // namespace
