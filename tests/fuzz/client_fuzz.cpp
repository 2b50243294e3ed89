// Fuzz target: the client core (HttpClient) fed a server's bytes: response heads, bodies of every
// framing, early closes, oversized fields; with TWINBENCH_FUZZ_TLS, the same behind the client's
// TLS transport, so the bytes are TLS records. The first input byte sets how the bytes arrive
// (read size) and how they are read (chunk size); the rest is what the server sent before it
// closed. Checked beyond "no crash": the client leaves REQUESTING/BODY once the peer has closed
// (no hang), and a body never exceeds its Content-Length.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>

#include "fuzz_transport.hpp"
#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/clientcore/tls_client.hpp"

namespace {

using tb::HttpStatus;

constexpr int kMaxRequests = 4;  // keep-alive requests on one connection
// Heads beyond this are refused; smaller than the default so short inputs reach the limit.
constexpr std::size_t kMaxHead = 2048;

bool in_request(HttpStatus s) { return s == HttpStatus::kRequesting || s == HttpStatus::kBody; }

std::shared_ptr<tb::TlsClientContext> tls_context() {
#ifdef TWINBENCH_FUZZ_TLS
  // Trusts nothing in particular (the system's roots): the fuzzer's bytes never bear a valid
  // chain, so what is exercised is the record layer and the handshake's parsing up to the check.
  static const auto context = std::make_shared<tb::TlsClientContext>(tb::TlsClientConfig{});
  return context;
#else
  return nullptr;
#endif
}

// One request: polls and reads until the response ends or the connection fails. Every poll reads
// at least one byte or moves on, and the peer closes after its bytes, so `max_polls` (two per
// input byte, and some) bounds a request that does not hang.
void run_request(tb::HttpClient& client, std::size_t max_polls) {
  std::uint64_t body = 0;
  for (std::size_t polls = 0; in_request(client.status()); ++polls) {
    if (polls > max_polls) std::abort();
    client.poll();
    for (auto chunk = client.read_response_body_chunk(); !chunk.empty();
         chunk = client.read_response_body_chunk())
      body += chunk.size();
    const std::int64_t length = client.has_response() ? client.response_body_length() : -1;
    if (length >= 0 && body > static_cast<std::uint64_t>(length)) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t mode = data[0];
  const auto input = std::as_bytes(std::span(data + 1, size - 1));
  tb::fuzz::InputTransports transports(input, mode & 0x1f);
  tb::fuzz::NoResolver resolver;
  tb::HttpClientOptions options;
  if (mode & 0x20) options.read_chunk_size = 7;
  options.send_on_request = (mode & 0x40) != 0;
  options.max_response_head = kMaxHead;
  tb::HttpClient client(transports, resolver, options);
  client.connect_to_host("10.0.0.1", 443, tls_context());
  for (int i = 0; i < 1024 && client.status() == HttpStatus::kConnecting; ++i) client.poll();
  for (int r = 0; r < kMaxRequests && client.status() == HttpStatus::kConnected; ++r) {
    if (!client.request("GET", "/api/benchmark/download/100/")) std::abort();
    run_request(client, 2 * size + 64);
  }
  return 0;
}
