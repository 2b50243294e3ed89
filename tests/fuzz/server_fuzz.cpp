// Fuzz target: the server connection (servercore) fed a client's bytes: request lines, heads,
// bodies, pipelined requests, a close at any point; with TWINBENCH_FUZZ_TLS, the same behind the
// server's TLS wrapper, so the bytes are TLS records. The first input byte sets the size of each
// receive; every write the server asks for is made at once. Checked beyond "no crash": once the
// client has closed and the writes are done, the server wants the connection closed.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>

#include "twinbench/servercore/server_connection.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace {

using tb::servercore::Connection;

std::shared_ptr<const tb::servercore::TlsServerContext> tls_context() {
#ifdef TWINBENCH_FUZZ_TLS
  static const auto context = [] {
    tb::servercore::CertProfile profile;
    profile.key_type = tb::servercore::KeyType::kEd25519;  // the cheapest handshakes
    const auto credentials = tb::servercore::make_credentials(profile);
    tb::servercore::TlsServerConfig config;
    config.chain_pem = credentials.chain_pem;
    config.key_pem = credentials.key_pem;
    return std::make_shared<const tb::servercore::TlsServerContext>(config);
  }();
  return context;
#else
  return nullptr;
#endif
}

// Makes every pending write; a connection that keeps asking for writes without new input is a
// bug (the largest response the config allows is a few hundred writes).
void drain(Connection& connection) {
  for (int writes = 0; !connection.next_write().empty(); ++writes) {
    if (writes > 100000) std::abort();
    connection.write_done();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t slice = data[0] == 0 ? size : data[0];
  auto input = std::as_bytes(std::span(data + 1, size - 1));
  tb::servercore::ServerConfig config;
  config.max_download_bytes = 1 << 20;  // larger downloads only cost time, not coverage
  config.max_echo_bytes = 1 << 16;
  config.max_header_bytes = 2048;  // smaller than the default so short inputs reach the limit
  const auto connection = tb::servercore::make_connection(config, tls_context());
  while (!input.empty() && !connection->should_close()) {
    const auto piece = input.first(std::min(slice, input.size()));
    input = input.subspan(piece.size());
    connection->on_receive(piece);
    drain(*connection);
  }
  connection->on_peer_closed();
  drain(*connection);
  if (!connection->should_close()) std::abort();
  return 0;
}
