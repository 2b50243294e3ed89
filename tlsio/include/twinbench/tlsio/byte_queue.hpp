#pragma once
// A first-in first-out queue of bytes, appended at the back and consumed from the front, whose
// storage is kept and reused. Unlike a std::vector it never zero-fills space that is about to be
// written (prepare/commit), and a read that drains it leaves no memmove behind: the TLS records of
// a download pass through such queues, and each pass over a MiB of them costs.
#include <cstddef>
#include <memory>
#include <span>
#include <utility>

namespace tb::tlsio {

class ByteQueue {
 public:
  ByteQueue() = default;
  ByteQueue(ByteQueue&& other) noexcept { swap(other); }  // leaves `other` empty
  ByteQueue& operator=(ByteQueue&& other) noexcept {
    ByteQueue taken(std::move(other));
    swap(taken);
    return *this;
  }

  // The bytes not consumed yet, oldest first. Valid until the next non-const call.
  std::span<const std::byte> data() const { return {storage_.get() + begin_, end_ - begin_}; }
  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return begin_ == end_; }

  // Copies `bytes` to the back; they must not be this queue's own (its storage may move).
  void append(std::span<const std::byte> bytes);
  // Room for n more bytes at the back, not initialised; commit() says how many of them were
  // written (at most n: any more would be bytes never written).
  std::span<std::byte> prepare(std::size_t n);
  void commit(std::size_t n);
  // Drops the first n bytes (at most size()).
  void consume(std::size_t n);
  void clear() { begin_ = end_ = prepared_ = 0; }
  void swap(ByteQueue& other) noexcept;

 private:
  std::unique_ptr<std::byte[]> storage_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  std::size_t prepared_ = 0;  // room the last prepare() gave, not yet committed
};

}  // namespace tb::tlsio
