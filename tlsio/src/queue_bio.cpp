#include "twinbench/tlsio/queue_bio.hpp"

#include <openssl/bio.h>

#include <algorithm>
#include <cstring>
#include <new>

namespace tb::tlsio {

namespace {

ByteQueue& queue_of(BIO* bio) { return *static_cast<ByteQueue*>(BIO_get_data(bio)); }

// The int-returning forms, as OpenSSL's memory BIO has: a read of an empty queue returns -1 with
// the retry flag, which libssl reads as "want read".
int queue_write(BIO* bio, const char* data, int n) {
  BIO_clear_retry_flags(bio);
  if (n <= 0) return 0;
  queue_of(bio).append(std::as_bytes(std::span(data, static_cast<std::size_t>(n))));
  return n;
}

int queue_read(BIO* bio, char* out, int n) {
  BIO_clear_retry_flags(bio);
  ByteQueue& queue = queue_of(bio);
  if (queue.empty()) {
    BIO_set_retry_read(bio);  // nothing yet: "wait", not end of stream
    return -1;
  }
  if (n <= 0) return 0;
  const std::size_t taken = std::min(static_cast<std::size_t>(n), queue.size());
  std::memcpy(out, queue.data().data(), taken);
  queue.consume(taken);
  return static_cast<int>(taken);
}

long ctrl(BIO* bio, int cmd, long, void*) {
  switch (cmd) {
    case BIO_CTRL_PENDING:  // bytes waiting to be read
      return static_cast<long>(queue_of(bio).size());
    case BIO_CTRL_WPENDING:  // bytes written but not yet passed on: none, the queue is the sink
      return 0;
    case BIO_CTRL_FLUSH:
      return 1;
    case BIO_CTRL_EOF:  // never the end: an empty queue only waits for more (a memory BIO says 1
      return 0;         // when empty, but libssl asks only when a read left no retry flag)
    default:            // what OpenSSL asks and a queue does not have (kTLS, datagram, push/pop)
      return 0;
  }
}

int create(BIO* bio) {
  BIO_set_init(bio, 0);  // usable once make_queue_bio gave it its queue
  return 1;
}

int destroy(BIO* bio) {
  BIO_set_data(bio, nullptr);  // the queue belongs to the caller
  return 1;
}

// Made once per process and never freed: OpenSSL keeps a pointer to it in every BIO.
BIO_METHOD* queue_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "twinbench queue");
    if (!m || !BIO_meth_set_write(m, queue_write) || !BIO_meth_set_read(m, queue_read) ||
        !BIO_meth_set_ctrl(m, ctrl) || !BIO_meth_set_create(m, create) ||
        !BIO_meth_set_destroy(m, destroy))
      throw std::bad_alloc();
    return m;
  }();
  return method;
}

}  // namespace

BIO* make_queue_bio(ByteQueue& queue) {
  BIO* bio = BIO_new(queue_method());
  if (!bio) throw std::bad_alloc();
  BIO_set_data(bio, &queue);
  BIO_set_init(bio, 1);
  return bio;
}

}  // namespace tb::tlsio
