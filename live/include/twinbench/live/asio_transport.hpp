#pragma once
// tb::Transport over an Asio TCP socket. Every socket operation runs on the IoThread; the polling
// side (frame loop or a model's worker) only touches mutex-protected buffers, like a non-blocking
// socket's kernel buffers.
#include <cstddef>
#include <memory>

#include "twinbench/clientcore/transport.hpp"
#include "twinbench/live/io_thread.hpp"

namespace tb::live {

struct TransportOptions {
  // Received bytes held for the consumer. Reading pauses when full, so a slow (frame-gated) reader
  // pushes back on the peer through TCP flow control, as with a real socket receive buffer.
  std::size_t receive_buffer_limit = std::size_t{4} << 20;
  // Bytes accepted by write_some() but not yet handed to the kernel.
  std::size_t send_buffer_limit = std::size_t{4} << 20;
  // setsockopt(TCP_CONGESTION) before connecting ("cubic", "bbr"); empty: the kernel's default.
  std::string congestion_control;
};

class AsioTransport final : public Transport {
 public:
  AsioTransport(IoThread& io, TransportOptions options = {});
  ~AsioTransport() override;  // closes; pending handlers keep the shared state alive

  void connect(const Endpoint& to) override;
  TransportStatus status() override;
  std::size_t write_some(std::span<const std::byte> data) override;
  ReadResult read_some(std::span<std::byte> out) override;
  std::size_t available() override;
  void close() override;
  std::string error() const override;

  // Received bytes currently held (== available()); for tests of the backpressure bound.
  std::size_t buffered() const;
  // The peer's FIN has been read off the socket (bytes before it may still be held); for tests
  // that the status stays connected until they are drained.
  bool peer_finished() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

class AsioTransportFactory final : public TransportFactory {
 public:
  explicit AsioTransportFactory(IoThread& io, TransportOptions options = {})
      : io_(io), options_(options) {}
  std::unique_ptr<Transport> create() override;

 private:
  IoThread& io_;
  TransportOptions options_;
};

}  // namespace tb::live
