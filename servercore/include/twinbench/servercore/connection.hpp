#pragma once
// What the live and simulated servers drive per accepted connection: bytes in, writes out. The
// plain benchmark server (ServerConnection) and its TLS wrapper (TlsServerConnection) both are one.
#include <cstddef>
#include <cstdint>
#include <span>

namespace tb::servercore {

class Connection {
 public:
  virtual ~Connection() = default;
  // Feeds bytes received from the client (any split).
  virtual void on_receive(std::span<const std::byte> data) = 0;
  // The client half-closed or the connection dropped.
  virtual void on_peer_closed() = 0;
  // The next write to make, as one write call; empty when nothing is pending. Valid until
  // write_done().
  virtual std::span<const std::byte> next_write() = 0;
  virtual void write_done() = 0;
  // True when next_write()'s bytes are all zero (a download body): the simulated server then hands
  // TCP a packet that stands for that many zero bytes without holding them (ns-3's zero area), and
  // saves copying each segment's payload. Only a fast path: the bytes are the same either way.
  virtual bool next_write_is_zeros() const { return false; }
  // True once every pending write is done and the connection should be closed.
  virtual bool should_close() const = 0;
  virtual std::uint64_t requests_served() const = 0;
  // True while a TLS handshake is under way (always false for plain HTTP).
  virtual bool handshaking() const { return false; }
  // True while the client owes the rest of something it started: a request head (or, with TLS,
  // the handshake or a record) of which some bytes arrived. The server bounds how long this may
  // last (serve --head-timeout) so a client that trickles a head (slowloris) cannot hold a
  // connection forever by sending a byte now and then.
  virtual bool receiving_request_head() const = 0;
  // That bound ran out: answer 408 and close (or, mid-handshake, just close).
  virtual void on_head_timeout() = 0;
};

}  // namespace tb::servercore
