#pragma once
// An OpenSSL BIO over a ByteQueue it does not own: what OpenSSL writes is appended to the queue,
// what it reads is taken from its front, and reading an empty queue asks OpenSSL to retry later
// (as a memory BIO with BIO_set_mem_eof_return(-1): "wait", not end of stream). It replaces
// OpenSSL's memory BIO, which zeroes every growth of its buffer and must be copied out of: with
// this one, the queue is the buffer the transport reads from or writes into.
#include "twinbench/tlsio/byte_queue.hpp"

#include <openssl/types.h>

namespace tb::tlsio {

// A new BIO over `queue`, which must outlive it. Throws std::bad_alloc if OpenSSL cannot make one.
BIO* make_queue_bio(ByteQueue& queue);

}  // namespace tb::tlsio
