#include "twinbench/clientcore/http_client.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <sstream>

#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>  // operator<< of a request: serialising, no I/O

namespace tb {
namespace http = boost::beast::http;

namespace {
// A hostile peer could announce a chunk of any size; Godot would try to buffer it whole.
constexpr std::size_t kMaxChunkBytes = 64 * 1024 * 1024;
// Raw bytes taken from the transport per read while parsing.
constexpr std::size_t kInputSlice = 64 * 1024;
}  // namespace

const char* to_string(HttpStatus s) {
  switch (s) {
    case HttpStatus::kDisconnected:
      return "DISCONNECTED";
    case HttpStatus::kResolving:
      return "RESOLVING";
    case HttpStatus::kCantResolve:
      return "CANT_RESOLVE";
    case HttpStatus::kConnecting:
      return "CONNECTING";
    case HttpStatus::kCantConnect:
      return "CANT_CONNECT";
    case HttpStatus::kConnected:
      return "CONNECTED";
    case HttpStatus::kRequesting:
      return "REQUESTING";
    case HttpStatus::kBody:
      return "BODY";
    case HttpStatus::kConnectionError:
      return "CONNECTION_ERROR";
    case HttpStatus::kTlsHandshakeError:
      return "TLS_HANDSHAKE_ERROR";
  }
  return "?";
}

// Beast's response parser plus the chunk bookkeeping Godot's one-chunk-per-read rule needs.
struct HttpClient::Parser {
  explicit Parser(std::size_t head_limit) {
    p.header_limit(static_cast<std::uint32_t>(head_limit));
    // Bodies stream through; nothing accumulates here. (Not boost::none: Beast 1.74 compares
    // the content length against an empty optional as "greater" and rejects every body.)
    p.body_limit(std::numeric_limits<std::uint64_t>::max());
    on_header = [this](std::uint64_t size, boost::beast::string_view,
                       boost::beast::error_code& ec) {
      if (size > kMaxChunkBytes) ec = http::error::body_limit;
      current.clear();
      current_size = size;
    };
    on_body = [this](std::uint64_t remain, boost::beast::string_view piece,
                     boost::beast::error_code&) -> std::size_t {
      auto* bytes = reinterpret_cast<const std::byte*>(piece.data());
      current.insert(current.end(), bytes, bytes + piece.size());
      if (remain == piece.size()) complete.push_back(std::move(current)), current.clear();
      return piece.size();
    };
    p.on_chunk_header(on_header);
    p.on_chunk_body(on_body);
  }

  http::response_parser<http::buffer_body> p;
  std::function<void(std::uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      on_header;
  std::function<std::size_t(std::uint64_t, boost::beast::string_view, boost::beast::error_code&)>
      on_body;
  std::vector<std::byte> current;
  std::uint64_t current_size = 0;
  std::deque<std::vector<std::byte>> complete;  // whole chunks not yet handed out
  bool read_until_eof = false;
};

HttpClient::HttpClient(TransportFactory& transports, Resolver& resolver, HttpClientOptions options)
    : transports_(transports), resolver_(resolver), options_(options) {}

HttpClient::~HttpClient() { close(); }

void HttpClient::close() {
  if (transport_) transport_->close();
  transport_.reset();
  if (resolving_) resolver_.forget(resolve_id_);
  resolving_ = false;
  parser_.reset();
  input_.clear();
  input_eof_ = false;
  request_buffer_.clear();
  request_sent_ = 0;
  status_ = HttpStatus::kDisconnected;
}

void HttpClient::fail(HttpStatus status, std::string why) {
  close();
  status_ = status;
  error_ = std::move(why);
}

void HttpClient::connect_to_host(const std::string& host, std::uint16_t port,
                                 std::shared_ptr<TlsClientContext> tls) {
  close();
  host_ = host;
  port_ = port;
  tls_ = std::move(tls);
  error_.clear();
  if (is_ip_literal(host)) {
    open_transport(host);
  } else {
    resolve_id_ = resolver_.start(host);
    resolving_ = true;
    status_ = HttpStatus::kResolving;
  }
}

void HttpClient::open_transport(const std::string& address) {
  transport_ = transports_.create();
  if (tls_) transport_ = std::make_unique<TlsClientTransport>(std::move(transport_), tls_, host_);
  transport_->connect(Endpoint{address, port_});
  status_ = HttpStatus::kConnecting;
}

bool HttpClient::request(const std::string& method, const std::string& target,
                         const std::vector<std::pair<std::string, std::string>>& headers,
                         std::string body) {
  if (status_ != HttpStatus::kConnected || !transport_) return false;
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  const bool default_port = port_ == (tls_ ? 443 : 80);
  req.set(http::field::host, default_port ? host_ : host_ + ":" + std::to_string(port_));
  req.set(http::field::user_agent, "twinbench");
  req.set(http::field::accept, "*/*");
  for (const auto& [name, value] : headers) req.set(name, value);
  if (!body.empty() || req.method() == http::verb::post) {
    req.body() = std::move(body);
    req.prepare_payload();
  }
  std::ostringstream out;
  out << req;
  request_buffer_ = out.str();
  request_sent_ = 0;
  parser_ = std::make_unique<Parser>(options_.max_response_head);
  status_ = HttpStatus::kRequesting;
  if (options_.send_on_request) {
    request_sent_ = transport_->write_some(std::as_bytes(std::span(request_buffer_)));
  }
  return true;
}

bool HttpClient::fill_input() {
  const ReadResult r = transport_->read_some(input_.prepare(kInputSlice));
  if (r.kind == ReadResult::Kind::kData) input_.commit(r.bytes);
  if (r.kind == ReadResult::Kind::kEof) input_eof_ = true;
  if (r.kind == ReadResult::Kind::kError) {
    fail(HttpStatus::kConnectionError, "transport error: " + transport_->error());
    return false;
  }
  return r.kind == ReadResult::Kind::kData;
}

void HttpClient::poll() {
  switch (status_) {
    case HttpStatus::kResolving: {
      const auto s = resolver_.status(resolve_id_);
      if (s == Resolver::Status::kWaiting) return;
      if (s == Resolver::Status::kFailed) {
        fail(HttpStatus::kCantResolve, "cannot resolve " + host_);
        return;
      }
      const std::string address = resolver_.address(resolve_id_);
      resolver_.forget(resolve_id_);
      resolving_ = false;
      open_transport(address);
      return;
    }
    case HttpStatus::kConnecting: {
      const auto s = transport_->status();
      if (s == TransportStatus::kConnected) status_ = HttpStatus::kConnected;
      if (s == TransportStatus::kError || s == TransportStatus::kClosed) {
        fail(HttpStatus::kCantConnect, "cannot connect: " + transport_->error());
      }
      if (s == TransportStatus::kHandshakeFailed)
        fail(HttpStatus::kTlsHandshakeError, transport_->error());
      return;
    }
    case HttpStatus::kConnected: {
      // Like Godot: a connection that died while idle is an error, so pools never reuse it.
      const auto s = transport_->status();
      if (s != TransportStatus::kConnected) {
        fail(HttpStatus::kConnectionError, "connection lost while idle");
      }
      return;
    }
    case HttpStatus::kRequesting:
      poll_requesting();
      return;
    case HttpStatus::kBody: {
      const auto s = transport_->status();
      if (s == TransportStatus::kError) fail(HttpStatus::kConnectionError, transport_->error());
      return;
    }
    default:
      return;
  }
}

void HttpClient::poll_requesting() {
  if (request_sent_ < request_buffer_.size()) {
    request_sent_ +=
        transport_->write_some(std::as_bytes(std::span(request_buffer_)).subspan(request_sent_));
    if (request_sent_ < request_buffer_.size()) return;  // send buffer full: try next poll
  }
  auto& p = parser_->p;
  while (!p.is_header_done()) {
    if (input_.empty() && !fill_input()) {
      if (status_ != HttpStatus::kRequesting) return;  // transport error
      if (input_eof_)
        fail(HttpStatus::kConnectionError, "connection closed before the response head");
      return;
    }
    boost::beast::error_code ec;
    input_.consume(p.put(boost::beast::net::const_buffer(input_.data().data(), input_.size()), ec));
    if (ec == http::error::need_more) {
      // Beast needs the unconsumed bytes again together with more: they stay in input_.
      if (input_.size() > options_.max_response_head) {
        fail(HttpStatus::kConnectionError, "response head larger than the limit");
        return;
      }
      if (!fill_input()) {
        if (status_ != HttpStatus::kRequesting) return;
        if (input_eof_)
          fail(HttpStatus::kConnectionError, "connection closed before the response head");
        return;
      }
      continue;
    }
    if (ec) {
      fail(HttpStatus::kConnectionError, "bad response head: " + ec.message());
      return;
    }
  }
  // Godot: a body follows when there is a length or chunking; without either a kept-alive
  // response has no body, and a closing one is read until the peer closes.
  if (p.chunked() || p.content_length()) {
    status_ = HttpStatus::kBody;
  } else if (!p.get().keep_alive()) {
    parser_->read_until_eof = true;
    status_ = HttpStatus::kBody;
  } else {
    status_ = HttpStatus::kConnected;
  }
}

std::vector<std::byte> HttpClient::read_response_body_chunk() {
  std::vector<std::byte> out;
  if (status_ != HttpStatus::kBody) return out;
  auto& p = parser_->p;
  const bool chunked = p.chunked();
  // Filled as bytes arrive: resizing it to the whole chunk up front would zero 64 KiB per call.
  if (!chunked) out.reserve(options_.read_chunk_size);
  std::size_t produced = 0;

  auto body_finished = [&] {
    if (!p.is_done()) return false;
    return !chunked || parser_->complete.empty();
  };
  while (!p.is_done()) {
    if (chunked && !parser_->complete.empty()) break;
    if (!chunked && produced == options_.read_chunk_size) break;
    if (input_.empty()) {
      if (!fill_input()) {
        if (status_ != HttpStatus::kBody) return {};
        if (!input_eof_) break;  // nothing more right now
        if (!parser_->read_until_eof) {
          fail(HttpStatus::kConnectionError, "connection closed before the body ended");
          return {};
        }
        boost::beast::error_code ec;
        p.put_eof(ec);
        break;
      }
    }
    if (!chunked) {
      // Room for at most what the input holds: only bytes about to be overwritten get zeroed.
      out.resize(produced + std::min(options_.read_chunk_size - produced, input_.size()));
      p.get().body().data = out.data() + produced;
      p.get().body().size = out.size() - produced;
    }
    boost::beast::error_code ec;
    input_.consume(p.put(boost::beast::net::const_buffer(input_.data().data(), input_.size()), ec));
    if (!chunked) produced = out.size() - p.get().body().size;
    if (ec == http::error::need_buffer) continue;  // our chunk is full
    if (ec == http::error::need_more) {            // the unconsumed bytes stay in input_
      if (!fill_input()) {
        if (status_ != HttpStatus::kBody) return {};
        if (input_eof_ && !parser_->read_until_eof) {
          fail(HttpStatus::kConnectionError, "connection closed before the body ended");
          return {};
        }
        break;
      }
      continue;
    }
    if (ec) {
      fail(HttpStatus::kConnectionError, "bad response body: " + ec.message());
      return {};
    }
  }
  if (chunked) {
    if (!parser_->complete.empty()) {
      out = std::move(parser_->complete.front());
      parser_->complete.pop_front();
    }
  } else {
    out.resize(produced);
  }
  if (body_finished()) {
    if (parser_->read_until_eof || !p.get().keep_alive()) {
      // The server closes after this response; the connection cannot be reused.
      transport_->close();
      status_ = HttpStatus::kDisconnected;
    } else {
      status_ = HttpStatus::kConnected;
    }
  }
  return out;
}

bool HttpClient::has_response() const { return parser_ && parser_->p.is_header_done(); }

int HttpClient::response_code() const {
  return has_response() ? static_cast<int>(parser_->p.get().result_int()) : 0;
}

bool HttpClient::is_response_chunked() const { return has_response() && parser_->p.chunked(); }

std::int64_t HttpClient::response_body_length() const {
  if (!has_response() || parser_->p.chunked() || !parser_->p.content_length()) return -1;
  return static_cast<std::int64_t>(*parser_->p.content_length());
}

bool HttpClient::response_keep_alive() const {
  return has_response() && !parser_->read_until_eof && parser_->p.get().keep_alive();
}

}  // namespace tb
