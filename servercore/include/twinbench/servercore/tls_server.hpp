#pragma once
// HTTPS for the benchmark server: TLS (OpenSSL through BIOs over byte queues, so still sans-IO)
// around a ServerConnection. Each plaintext write of the wrapped core becomes its TLS records in
// one write, and handshake output produced by received bytes (e.g. TLS 1.3 session tickets) is
// ready for the flush that follows that receive, so the server makes the same writes as without TLS
// plus its handshake flights.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "twinbench/servercore/connection.hpp"
#include "twinbench/servercore/server_connection.hpp"
#include "twinbench/tlsio/context_pool.hpp"

namespace tb::servercore {

enum class TlsVersion { k1_2, k1_3 };

struct TlsServerConfig {
  std::string chain_pem;  // server certificate first, then intermediates
  std::string key_pem;
  TlsVersion min_version = TlsVersion::k1_2;
  TlsVersion max_version = TlsVersion::k1_3;
  bool resumption = true;  // keep a session cache, so clients can resume
  // Session tickets issued after each full handshake; default: 1 with resumption, else none.
  std::optional<std::uint32_t> tickets{};
  // Blinding defends RSA private-key operations against timing attacks. Off only for simulated
  // servers, which no one can time: it saves ~5 % of a simulated 1 MiB HTTPS download's
  // instructions (servercore/src/unblinded_key.cpp). Without it, nothing a context caches
  // changes what it does next, so its OpenSSL context is reused by the next server with the same
  // settings (tlsio/context_pool.hpp); a blinded key caches the blinding factor it drew.
  bool rsa_blinding = true;
};

// Certificates, key and settings shared by every connection; immutable once made.
class TlsServerContext {
 public:
  explicit TlsServerContext(const TlsServerConfig& config);  // throws std::runtime_error
  ~TlsServerContext();
  TlsServerContext(const TlsServerContext&) = delete;
  TlsServerContext& operator=(const TlsServerContext&) = delete;
  ssl_ctx_st* native() const { return ctx_.get(); }

 private:
  tlsio::PooledContext ctx_;
};

class TlsServerConnection : public Connection {
 public:
  TlsServerConnection(std::shared_ptr<const TlsServerContext> context, ServerConfig config = {});
  ~TlsServerConnection() override;

  void on_receive(std::span<const std::byte> data) override;
  void on_peer_closed() override;
  std::span<const std::byte> next_write() override;
  void write_done() override;
  bool should_close() const override;
  std::uint64_t requests_served() const override;
  bool handshaking() const override;
  bool receiving_request_head() const override;
  void on_head_timeout() override;
  // Why the handshake or the connection failed; empty while all is well.
  const std::string& error() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A plain connection, or a TLS one when `tls` is set.
std::unique_ptr<Connection> make_connection(const ServerConfig& config,
                                            const std::shared_ptr<const TlsServerContext>& tls);

}  // namespace tb::servercore
