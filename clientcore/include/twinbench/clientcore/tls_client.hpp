#pragma once
// TLS for the client core: OpenSSL through BIOs over byte queues as a Transport decorator, so the
// same handshake bytes flow over Asio sockets, ns-3 sockets or the in-memory test network. As in
// Godot's HTTPClient over StreamPeerTLS, the stream counts as connecting until the TCP connect
// AND the handshake are done; each status() call steps the handshake by what has arrived, and
// every handshake flight is written as soon as OpenSSL produces it (like mbedTLS's send callback).
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "twinbench/clientcore/transport.hpp"
#include "twinbench/tlsio/byte_queue.hpp"
#include "twinbench/tlsio/context_pool.hpp"

struct ssl_st;
struct ssl_session_st;

namespace tb {

enum class TlsVersion { k1_2, k1_3 };

struct TlsClientConfig {
  std::string trusted_ca_pem;  // roots to trust (PEM); empty: the system's roots, as Godot's bundle
  TlsVersion min_version = TlsVersion::k1_2;
  TlsVersion max_version = TlsVersion::k1_3;  // Godot 4 enables TLS 1.3; Godot 3.2 stops at 1.2
  // Offer the session saved from the last connection to the same host:port (Godot does not
  // resume sessions; the option measures what resumption would save).
  bool resumption = false;
};

// Settings, trusted roots and saved sessions shared by the connections of one client (a model or
// a Session). Thread-safe: threaded models handshake on their worker.
class TlsClientContext {
 public:
  explicit TlsClientContext(const TlsClientConfig& config);  // throws std::runtime_error (bad PEM)
  ~TlsClientContext();
  TlsClientContext(const TlsClientContext&) = delete;
  TlsClientContext& operator=(const TlsClientContext&) = delete;

  const TlsClientConfig& config() const { return config_; }
  ssl_ctx_st* native() const { return ctx_.get(); }
  // The saved session for "host:port" (a new reference, or null), and saving one (takes it).
  ssl_session_st* saved_session(const std::string& key) const;
  void save_session(const std::string& key, ssl_session_st* session);

 private:
  TlsClientConfig config_;
  tlsio::PooledContext ctx_;  // reused by the next client with the same settings
  mutable std::mutex mutex_;
  std::map<std::string, ssl_session_st*> sessions_;
};

class TlsClientTransport : public Transport {
 public:
  // `host` is what the certificate must name (SNI too, unless it is an IP literal).
  TlsClientTransport(std::unique_ptr<Transport> inner, std::shared_ptr<TlsClientContext> context,
                     std::string host);
  ~TlsClientTransport() override;

  void connect(const Endpoint& to) override;
  // kConnecting through the TCP connect and the handshake; kHandshakeFailed when it fails.
  TransportStatus status() override;
  // Encrypts all of `data` as one write once established and nothing older waits; else 0.
  std::size_t write_some(std::span<const std::byte> data) override;
  ReadResult read_some(std::span<std::byte> out) override;
  std::size_t available() override;
  void close() override;  // sends close_notify (which also keeps the session resumable)
  std::string error() const override { return error_; }

  bool session_reused() const;

 private:
  enum class Phase { kIdle, kTcp, kHandshake, kOpen, kFailed, kClosed };
  void step_handshake();
  bool pull();   // moves one read of inner bytes into OpenSSL; false when none came
  void flush();  // hands OpenSSL's output to the inner transport, as one write per flight
  void fail_handshake(std::string why);

  std::unique_ptr<Transport> inner_;
  std::shared_ptr<TlsClientContext> context_;
  std::string host_;
  std::string session_key_;    // "host:port"
  tlsio::ByteQueue incoming_;  // ciphertext read from the inner transport, not yet by OpenSSL
  tlsio::ByteQueue outgoing_;  // ciphertext OpenSSL wrote that the inner transport has not taken
  ssl_st* ssl_ = nullptr;      // its BIOs are over the two queues
  Phase phase_ = Phase::kIdle;
  bool inner_eof_ = false;
  bool inner_error_ = false;
  bool tls_eof_ = false;  // close_notify received
  std::string error_;
};

}  // namespace tb
