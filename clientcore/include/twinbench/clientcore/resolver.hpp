#pragma once
// The name-resolution seam, polled like Godot's IP resolve queue.
#include <cstdint>
#include <optional>
#include <string>

namespace tb {

class Resolver {
 public:
  enum class Status { kWaiting, kDone, kFailed };
  using Id = std::uint64_t;
  virtual ~Resolver() = default;
  virtual Id start(const std::string& host) = 0;
  virtual Status status(Id id) = 0;
  // The numeric address once status() is kDone.
  virtual std::string address(Id id) = 0;
  virtual void forget(Id id) = 0;
};

// True for a numeric IPv4/IPv6 literal, which Godot connects to without resolving.
bool is_ip_literal(const std::string& host);

}  // namespace tb
