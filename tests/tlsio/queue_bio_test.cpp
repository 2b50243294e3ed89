#include "twinbench/tlsio/queue_bio.hpp"

#include <gtest/gtest.h>
#include <openssl/bio.h>

#include <array>
#include <cstring>
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
  EXPECT_EQ(BIO_eof(bio), 0);
  // Bytes that arrive later are read, and the retry flag goes.
  queue.append(std::as_bytes(std::span("ab", 2)));
  EXPECT_EQ(BIO_read(bio, out.data(), 4), 2);
  EXPECT_FALSE(BIO_should_retry(bio));
  BIO_free(bio);
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
