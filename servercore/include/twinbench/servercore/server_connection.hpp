#pragma once
// Sans-IO benchmark server: one object per accepted connection. Bytes in via on_receive(), writes
// out via next_write()/write_done(). It serves the endpoints of the benchmark's local stand-in
// server: GET /api/benchmark/ping/, GET /api/benchmark/download/<n>/, POST /echo, with HTTP/1.1
// keep-alive. The same core runs under Asio (live) and as an ns-3 application (sim).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "twinbench/servercore/connection.hpp"

namespace tb::servercore {

struct ServerConfig {
  std::size_t write_slice = 64 * 1024;       // body bytes per write, like the stand-in server
  std::size_t max_header_bytes = 16 * 1024;  // larger request heads get 431 and a close
  std::size_t max_echo_bytes = 16 * 1024 * 1024;
  std::uint64_t max_download_bytes = 1ull << 34;
  // false: a response's head in one write and its body in the next ones, as the stand-in server
  // does (behind Nagle and a delayed ACK the body waits ~40 ms). true: a head and an in-memory
  // body of up to write_slice bytes (ping, echo, routed errors) go out in one write, as nginx's
  // writev.
  bool coalesce_head_and_body = false;
};

class ServerConnection : public Connection {
 public:
  explicit ServerConnection(ServerConfig config = {});
  ~ServerConnection() override;
  ServerConnection(ServerConnection&&) noexcept;
  ServerConnection& operator=(ServerConnection&&) noexcept;

  // Feeds bytes received from the client (any split; pipelined requests are served in order).
  void on_receive(std::span<const std::byte> data) override;
  // The client half-closed or the connection dropped.
  void on_peer_closed() override;

  // The next write to make, as one write call: a response head in one write, then the body in
  // write_slice pieces. Empty when nothing is pending. Valid until write_done().
  std::span<const std::byte> next_write() override;
  void write_done() override;
  bool next_write_is_zeros() const override;  // a download body's slice

  // True once every pending write is done and the connection should be closed
  // (Connection: close, HTTP/1.0 without keep-alive, a bad request, or the peer closed).
  bool should_close() const override;
  std::uint64_t requests_served() const override;
  bool receiving_request_head() const override;
  void on_head_timeout() override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tb::servercore
