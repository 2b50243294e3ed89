// Fuzz target: the load generator's pipelined exchange (loadbench::PipelinedExchange) fed a
// server's bytes: responses to up to eight outstanding requests on one keep-alive connection, of
// every framing, malformed, cut short or closing. The first input byte sets how the bytes arrive
// (bits 0-4: bytes per receive, 0 = all at once) and the window (bits 5-7: 1 to 8 requests
// outstanding); the rest is what the server sent. Checked beyond "no crash": never more requests
// outstanding than the window, never more responses than requests sent, and each response matched
// to its request in order has the body that request asked for.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "twinbench/loadbench/pipelined_exchange.hpp"

namespace {

// What the load generator sends: a ping, a download and an echo, round robin.
std::shared_ptr<const std::vector<tb::loadbench::LoadRequest>> requests() {
  static const auto all = std::make_shared<const std::vector<tb::loadbench::LoadRequest>>(
      std::vector<tb::loadbench::LoadRequest>{
          {tb::loadbench::format_load_request("GET", "/api/benchmark/ping/", "fuzz", ""), std::nullopt,
           std::nullopt},
          {tb::loadbench::format_load_request("GET", "/api/benchmark/download/100/", "fuzz", ""),
           std::nullopt, 100},
          {tb::loadbench::format_load_request("POST", "/echo", "fuzz", "abc"), std::string("abc"),
           std::nullopt},
      });
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = data[0] & 0x1f;
  const std::size_t window = 1 + (data[0] >> 5);
  const auto all = requests();
  tb::loadbench::PipelinedExchange exchange(all, window);
  const std::span<const char> input(reinterpret_cast<const char*>(data + 1), size - 1);
  tb::Time now{};
  std::size_t sent = 0;
  std::vector<tb::loadbench::PipelinedExchange::Completion> done;
  auto send = [&] {
    const std::string bytes = exchange.take_requests(now);
    for (std::size_t at = bytes.find(" HTTP/1.1\r\n"); at != std::string::npos;
         at = bytes.find(" HTTP/1.1\r\n", at + 1))
      ++sent;
  };
  send();
  for (std::size_t at = 0; at < input.size() && !exchange.ended();) {
    const std::size_t n = piece == 0 ? input.size() - at : std::min(piece, input.size() - at);
    now += std::chrono::microseconds(1);
    exchange.on_receive(input.subspan(at, n), now, done);
    at += n;
    if (exchange.outstanding() > window) std::abort();
    if (done.size() > sent) std::abort();
    send();
  }
  for (std::size_t i = 0; i < done.size(); ++i) {
    const tb::loadbench::LoadRequest& asked = (*all)[i % all->size()];
    if (asked.body_size && done[i].body_bytes != *asked.body_size) std::abort();
    if (asked.echoed_body && done[i].body_bytes != asked.echoed_body->size()) std::abort();
  }
  return 0;
}
