#pragma once
// One load-generator connection's protocol, sans-IO: it keeps up to `window` requests
// outstanding on one keep-alive connection (HTTP/1.1 pipelining), matches each response to its
// request in order and checks it. The caller moves the bytes and says what time it is.
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twinbench/clientcore/time.hpp"

namespace tb::loadbench {

// A request as sent, and what its response must be.
struct LoadRequest {
  std::string bytes;                       // the whole request, head and body
  std::optional<std::string> echoed_body;  // set: the response body must equal it
  std::optional<std::uint64_t> body_size;  // set: the response body must have this size
};

// A request line and head for `method` `target` on `host`, with `body` (Content-Length).
std::string format_load_request(const std::string& method, const std::string& target,
                                const std::string& host, const std::string& body);

class PipelinedExchange {
 public:
  struct Completion {
    Time sent;      // when the request was handed to the socket
    Time answered;  // when the last byte of its response arrived
    std::uint64_t body_bytes;
  };

  // `requests` are sent in turn, round robin, starting with requests[first % size].
  PipelinedExchange(std::shared_ptr<const std::vector<LoadRequest>> requests, std::size_t window,
                    std::size_t first = 0);
  ~PipelinedExchange();
  PipelinedExchange(PipelinedExchange&&) noexcept;
  PipelinedExchange& operator=(PipelinedExchange&&) noexcept;

  // The bytes of as many requests as fit the window now, in one piece, each stamped sent at
  // `now`; empty when the window is full or the exchange has ended.
  std::string take_requests(Time now);
  // Feeds received bytes (any split); each response completed is appended to `done`. After a
  // malformed or unexpected response, or a response closing the connection, ended() is true and
  // further input is ignored.
  void on_receive(std::span<const char> data, Time now, std::vector<Completion>& done);

  std::size_t outstanding() const;
  bool ended() const;
  // Why the exchange ended early: empty if it has not, "closed" after a response that closes
  // the connection, else what was wrong with the response.
  const std::string& error() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tb::loadbench
