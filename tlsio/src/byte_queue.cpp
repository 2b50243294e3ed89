#include "twinbench/tlsio/byte_queue.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace tb::tlsio {

std::span<std::byte> ByteQueue::prepare(std::size_t n) {
  if (capacity_ - end_ < n) {
    const std::size_t held = size();
    if (capacity_ - held >= n && held <= capacity_ / 2) {
      // Enough room once the held bytes move to the front, and they are few: move them.
      std::memmove(storage_.get(), storage_.get() + begin_, held);
    } else {
      const std::size_t capacity = std::max(held + n, 2 * capacity_);
      auto storage = std::make_unique_for_overwrite<std::byte[]>(capacity);
      if (held > 0) std::memcpy(storage.get(), storage_.get() + begin_, held);
      storage_ = std::move(storage);
      capacity_ = capacity;
    }
    begin_ = 0;
    end_ = held;
  }
  prepared_ = n;
  return {storage_.get() + end_, n};
}

void ByteQueue::commit(std::size_t n) {
  end_ += std::min(n, prepared_);
  prepared_ = 0;
}

void ByteQueue::append(std::span<const std::byte> bytes) {
  if (bytes.empty()) return;
  std::memcpy(prepare(bytes.size()).data(), bytes.data(), bytes.size());
  commit(bytes.size());
}

void ByteQueue::consume(std::size_t n) {
  begin_ += std::min(n, size());
  if (begin_ == end_) begin_ = end_ = 0;  // drained: the next bytes start at the front again
  prepared_ = 0;
}

void ByteQueue::swap(ByteQueue& other) noexcept {
  std::swap(storage_, other.storage_);
  std::swap(capacity_, other.capacity_);
  std::swap(begin_, other.begin_);
  std::swap(end_, other.end_);
  std::swap(prepared_, other.prepared_);
}

}  // namespace tb::tlsio
