#pragma once
// A Transport whose peer is a fuzzer's input: connected at once, it hands out the input in reads
// of `slice` bytes (0: all at once), then reports the peer's close. Whatever the client writes is
// dropped. The client core cannot tell it from a socket whose peer sent these bytes and a FIN.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>

#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/transport.hpp"

namespace tb::fuzz {

class InputTransport : public Transport {
 public:
  InputTransport(std::span<const std::byte> input, std::size_t slice)
      : input_(input), slice_(slice == 0 ? input.size() : slice) {}

  void connect(const Endpoint&) override { connected_ = true; }
  TransportStatus status() override {
    if (closed_) return TransportStatus::kClosed;
    if (!connected_) return TransportStatus::kIdle;
    return available() == 0 ? TransportStatus::kClosed : TransportStatus::kConnected;
  }
  std::size_t write_some(std::span<const std::byte> data) override {
    return closed_ ? 0 : data.size();
  }
  ReadResult read_some(std::span<std::byte> out) override {
    const std::size_t n = std::min({out.size(), slice_, available()});
    if (n == 0) return {ReadResult::Kind::kEof, 0};
    std::memcpy(out.data(), input_.data(), n);
    input_ = input_.subspan(n);
    return {ReadResult::Kind::kData, n};
  }
  std::size_t available() override { return closed_ ? 0 : input_.size(); }
  void close() override { closed_ = true; }
  std::string error() const override { return {}; }

 private:
  std::span<const std::byte> input_;
  std::size_t slice_;
  bool connected_ = false;
  bool closed_ = false;
};

// Hands out one InputTransport per connection, all reading from the same remaining input, so a
// client that reconnects sees the rest of the bytes.
class InputTransports : public TransportFactory {
 public:
  InputTransports(std::span<const std::byte> input, std::size_t slice)
      : input_(input), slice_(slice) {}
  std::unique_ptr<Transport> create() override {
    auto t = std::make_unique<InputTransport>(input_, slice_);
    input_ = {};  // one connection gets the bytes; a reconnect sees a closed peer
    return t;
  }

 private:
  std::span<const std::byte> input_;
  std::size_t slice_;
};

// The targets connect to IP literals, which need no lookup.
class NoResolver : public Resolver {
 public:
  Id start(const std::string&) override { return 1; }
  Status status(Id) override { return Status::kFailed; }
  std::string address(Id) override { return {}; }
  void forget(Id) override {}
};

}  // namespace tb::fuzz
