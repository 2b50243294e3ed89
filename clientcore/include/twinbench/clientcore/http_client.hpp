#pragma once
// A sans-IO HTTP/1.1 client with the statuses and polling semantics of Godot's HTTPClient
// (core/io/http_client_tcp.cpp). It owns a Transport but never waits: every method returns at
// once, and poll() advances the state machine by what the transport has now. Response heads and
// bodies (Content-Length, chunked, read-until-close) are parsed by Boost.Beast's parser.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/clientcore/transport.hpp"
#include "twinbench/tlsio/byte_queue.hpp"

namespace tb {

enum class HttpStatus {
  kDisconnected,
  kResolving,
  kCantResolve,
  kConnecting,
  kCantConnect,
  kConnected,
  kRequesting,
  kBody,
  kConnectionError,
  kTlsHandshakeError,
};
const char* to_string(HttpStatus s);

struct HttpClientOptions {
  std::size_t read_chunk_size = 65536;  // Godot's default (HTTPClient.read_chunk_size)
  // Godot 3.2's request() writes the request at once (a blocking put); 4.x only buffers it and
  // the next poll() sends it.
  bool send_on_request = false;
  // Godot reads response heads without a limit; twinbench bounds them so a hostile peer cannot
  // grow memory (an endless head ends in kConnectionError).
  std::size_t max_response_head = 64 * 1024;
};

class HttpClient {
 public:
  HttpClient(TransportFactory& transports, Resolver& resolver, HttpClientOptions options = {});
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Closes any current connection and starts resolving (host name) or connecting (IP literal).
  // With `tls`, CONNECTING lasts until the TLS handshake is done too (the certificate must name
  // `host`); a failed handshake ends in kTlsHandshakeError with OpenSSL's reason in error().
  void connect_to_host(const std::string& host, std::uint16_t port,
                       std::shared_ptr<TlsClientContext> tls = nullptr);
  // Buffers a request; only valid in kConnected. Returns false (and changes nothing) otherwise.
  bool request(const std::string& method, const std::string& target,
               const std::vector<std::pair<std::string, std::string>>& headers = {},
               std::string body = {});
  void poll();
  // Returns the next piece of body: up to read_chunk_size bytes of what has arrived
  // (Content-Length or read-until-close), or at most one complete HTTP chunk (chunked).
  // Empty when nothing is available. At body end the status returns to kConnected.
  std::vector<std::byte> read_response_body_chunk();
  void close();

  HttpStatus status() const { return status_; }
  void set_read_chunk_size(std::size_t n) { options_.read_chunk_size = n; }
  bool has_response() const;
  int response_code() const;
  bool is_response_chunked() const;
  std::int64_t response_body_length() const;  // -1 when chunked or read until close
  // False when the response asked to close the connection: it must not be reused.
  bool response_keep_alive() const;
  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }
  const std::string& error() const { return error_; }  // why the last error status was entered

 private:
  struct Parser;
  void fail(HttpStatus status, std::string why);
  bool fill_input();  // moves transport bytes into input_; false on EOF or error
  void poll_requesting();
  void open_transport(const std::string& address);

  TransportFactory& transports_;
  Resolver& resolver_;
  HttpClientOptions options_;
  HttpStatus status_ = HttpStatus::kDisconnected;
  std::string host_;
  std::uint16_t port_ = 0;
  std::shared_ptr<TlsClientContext> tls_;
  Resolver::Id resolve_id_ = 0;
  bool resolving_ = false;
  std::unique_ptr<Transport> transport_;
  std::string request_buffer_;
  std::size_t request_sent_ = 0;
  std::unique_ptr<Parser> parser_;
  // Received bytes not yet consumed by the parser. The transport reads straight into it, into
  // space that is not zeroed first (zeroing a 64 KiB slice per read was a measurable cost).
  tlsio::ByteQueue input_;
  bool input_eof_ = false;
  std::string error_;
};

}  // namespace tb
