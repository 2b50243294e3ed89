#pragma once
// The byte-stream seam: a non-blocking, polled stream socket (what Godot's StreamPeerTCP is to
// HTTPClient). Backends: Asio (live), ns3::TcpSocket (sim), in-memory (tests), TLS (a decorator).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace tb {

struct Endpoint {
  std::string address;  // numeric IP, as produced by a Resolver
  std::uint16_t port = 0;
};

enum class TransportStatus {
  kIdle,  // not connected yet
  kConnecting,
  kConnected,        // includes "peer sent FIN but buffered bytes remain"
  kClosed,           // orderly close seen and every buffered byte consumed, or close() called
  kError,            // connect failed or the connection broke
  kHandshakeFailed,  // TLS: the handshake failed (error() says why); the stream is unusable
};

struct ReadResult {
  enum class Kind { kData, kWouldBlock, kEof, kError };
  Kind kind = Kind::kWouldBlock;
  std::size_t bytes = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Starts connecting; never blocks. status() reports progress.
  virtual void connect(const Endpoint& to) = 0;
  virtual TransportStatus status() = 0;
  // Accepts as many bytes as the send buffer takes now (possibly 0); never blocks.
  virtual std::size_t write_some(std::span<const std::byte> data) = 0;
  // Copies buffered received bytes; kWouldBlock when none are buffered and the stream is open.
  virtual ReadResult read_some(std::span<std::byte> out) = 0;
  virtual std::size_t available() = 0;
  virtual void close() = 0;
  virtual std::string error() const = 0;  // reason of the last kError, for diagnostics
};

class TransportFactory {
 public:
  virtual ~TransportFactory() = default;
  virtual std::unique_ptr<Transport> create() = 0;
};

}  // namespace tb
