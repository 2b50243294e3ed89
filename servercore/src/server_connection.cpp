// Sans-IO benchmark server connection. Requests are parsed with Beast's request_parser; responses
// are queued as a preformatted head plus a body that is either owned (ping, echo, errors) or a
// count of zero bytes served from one static buffer (downloads), so a download of any size costs
// no memory. Responses carry no Date header so the bytes are identical run to run.
#include "twinbench/servercore/server_connection.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/field.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>
#include <charconv>
#include <deque>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace tb::servercore {
namespace {

namespace http = boost::beast::http;

// Downloads are served as slices of this buffer, so write_slice is capped at its size.
constexpr std::size_t kZeroBufferBytes = 1024 * 1024;

std::span<const std::byte> zero_bytes(std::size_t count) {
  // Function-local static: allocated once, on first use, thread-safe.
  static const std::vector<std::byte> zeros(kZeroBufferBytes, std::byte{0});
  return {zeros.data(), count};
}

// A client that pipelines this many requests without reading the responses stops being parsed
// until it reads; while paused at most kMaxPausedInputBytes of its input is kept, and beyond that
// the connection is closed. This bounds the memory of one connection whatever the peer sends.
constexpr std::size_t kMaxQueuedResponses = 32;
constexpr std::size_t kMaxPausedInputBytes = 1024 * 1024;
// Input is handed to the parser in pieces of this size so the buffer never holds a whole
// oversized on_receive() at once.
constexpr std::size_t kFeedPieceBytes = 64 * 1024;

constexpr std::string_view kPingPath = "/api/benchmark/ping/";
constexpr std::string_view kDownloadPrefix = "/api/benchmark/download/";
constexpr std::string_view kEchoPath = "/echo";
constexpr std::string_view kPingBody = R"({"ok": true})";

enum class ConnectionHeader { none, keep_alive, close };

struct Response {
  std::string head;
  std::string owned_body;             // used when zero_body_bytes == 0
  std::uint64_t zero_body_bytes = 0;  // download bodies: this many zero bytes
  bool interim = false;               // 100 Continue: not counted as a served response
  bool close_after = false;

  // Write progress.
  std::size_t head_sent = 0;
  std::uint64_t body_sent = 0;

  std::uint64_t body_size() const {
    return zero_body_bytes != 0 ? zero_body_bytes : owned_body.size();
  }
  bool finished() const { return head_sent == head.size() && body_sent == body_size(); }
};

std::string_view reason_phrase(unsigned status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    default:
      return "Unknown";
  }
}

std::string format_head(unsigned status, std::string_view content_type,
                        std::uint64_t content_length, ConnectionHeader connection,
                        std::string_view allow = {}) {
  std::string head;
  head.reserve(160);
  head += "HTTP/1.1 ";
  head += std::to_string(status);
  head += ' ';
  head += reason_phrase(status);
  head += "\r\nServer: twinbench\r\nContent-Type: ";
  head += content_type;
  head += "\r\nContent-Length: ";
  head += std::to_string(content_length);
  head += "\r\n";
  if (!allow.empty()) {
    head += "Allow: ";
    head += allow;
    head += "\r\n";
  }
  if (connection == ConnectionHeader::close) head += "Connection: close\r\n";
  if (connection == ConnectionHeader::keep_alive) head += "Connection: keep-alive\r\n";
  head += "\r\n";
  return head;
}

Response text_response(unsigned status, std::string_view text, ConnectionHeader connection,
                       std::string_view allow = {}) {
  Response response;
  response.owned_body = std::string(text) + "\n";
  response.head = format_head(status, "text/plain; charset=utf-8", response.owned_body.size(),
                              connection, allow);
  response.close_after = connection == ConnectionHeader::close;
  return response;
}

// Parses "<decimal>/" (the rest of a download path); nullopt when malformed or out of range.
std::optional<std::uint64_t> parse_download_size(std::string_view rest, std::uint64_t max_bytes) {
  if (rest.size() < 2 || rest.back() != '/') return std::nullopt;
  std::string_view digits = rest.substr(0, rest.size() - 1);
  std::uint64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc{} || end != digits.data() + digits.size()) return std::nullopt;
  if (value > max_bytes) return std::nullopt;
  return value;
}

}  // namespace

struct ServerConnection::Impl {
  using RequestParser = http::request_parser<http::string_body>;

  ServerConfig config;
  std::size_t write_slice;

  std::string input;             // received bytes not yet consumed by the parser
  std::size_t input_offset = 0;  // consumed prefix of `input`, compacted lazily
  std::optional<RequestParser> parser;
  bool continue_sent = false;  // 100 Continue already queued for the current request

  std::deque<Response> responses;  // deque: push_back keeps references to the front stable
  bool reading_stopped = false;    // a close is decided; further input is ignored
  bool input_closed = false;       // the peer closed its side; nothing more arrives
  bool close_when_drained = false;
  std::uint64_t served = 0;

  explicit Impl(ServerConfig cfg)
      : config(cfg), write_slice(std::clamp<std::size_t>(cfg.write_slice, 1, kZeroBufferBytes)) {}

  std::size_t unparsed_bytes() const { return input.size() - input_offset; }

  // Part of a head is in and the rest is up to the client (not held back by a full queue).
  bool receiving_head() const {
    if (reading_stopped || input_closed || responses.size() >= kMaxQueuedResponses) return false;
    return parser ? !parser->is_header_done() : unparsed_bytes() > 0;
  }

  void head_timed_out() {
    if (reading_stopped) return;
    responses.push_back(text_response(408, "request head timeout", ConnectionHeader::close));
    stop_reading();
  }

  void receive(std::span<const std::byte> data) {
    while (!data.empty() && !reading_stopped && !input_closed) {
      const std::size_t piece = std::min(data.size(), kFeedPieceBytes);
      compact_input();
      input.append(reinterpret_cast<const char*>(data.data()), piece);
      data = data.subspan(piece);
      parse_available();
      if (!reading_stopped && unparsed_bytes() > kMaxPausedInputBytes + config.max_header_bytes) {
        stop_reading();  // the peer keeps pipelining without reading: give up on it
      }
    }
  }

  void peer_closed() {
    // Requests already received are still served (half-close); a trailing partial request can
    // never complete, so the connection closes once the queue drains.
    input_closed = true;
    close_when_drained = true;
  }

  void stop_reading() {
    reading_stopped = true;
    close_when_drained = true;
    parser.reset();
    input.clear();
    input.shrink_to_fit();
    input_offset = 0;
  }

  void compact_input() {
    if (input_offset == 0) return;
    input.erase(0, input_offset);
    input_offset = 0;
  }

  void parse_available() {
    while (!reading_stopped && unparsed_bytes() > 0 && responses.size() < kMaxQueuedResponses) {
      if (!parser) start_request();
      boost::beast::error_code ec;
      const std::size_t used =
          parser->put(boost::beast::net::const_buffer(input.data() + input_offset, unparsed_bytes()), ec);
      input_offset += used;
      if (ec == http::error::need_more) {
        maybe_send_continue();
        break;
      }
      if (ec) {
        reject(ec);
        return;
      }
      if (parser->is_done()) {
        finish_request();
      } else {
        maybe_send_continue();
        if (used == 0) break;  // defensive: no progress without an error
      }
    }
    if (unparsed_bytes() == 0) {
      input.clear();
      input_offset = 0;
    }
  }

  void start_request() {
    parser.emplace();
    parser->header_limit(
        static_cast<std::uint32_t>(std::min<std::size_t>(config.max_header_bytes, UINT32_MAX)));
    parser->body_limit(static_cast<std::uint64_t>(config.max_echo_bytes));
    parser->eager(true);
    continue_sent = false;
  }

  // Like Python's BaseHTTPRequestHandler: an HTTP/1.1 "Expect: 100-continue" gets an interim
  // 100 response once the head is parsed, so clients (curl) do not stall before sending the body.
  void maybe_send_continue() {
    if (!parser || continue_sent || !parser->is_header_done() || parser->is_done()) return;
    const auto& request = parser->get();
    if (request.version() < 11) return;
    const auto expect = request[http::field::expect];
    if (!boost::beast::iequals(expect, "100-continue")) return;
    Response interim;
    interim.head = "HTTP/1.1 100 Continue\r\n\r\n";
    interim.interim = true;
    responses.push_back(std::move(interim));
    continue_sent = true;
  }

  void reject(const boost::beast::error_code& ec) {
    if (ec == http::error::header_limit) {
      responses.push_back(text_response(431, "request header too large", ConnectionHeader::close));
    } else if (ec == http::error::body_limit) {
      responses.push_back(text_response(413, "request body too large", ConnectionHeader::close));
    } else {
      responses.push_back(text_response(400, "bad request", ConnectionHeader::close));
    }
    stop_reading();
  }

  void finish_request() {
    http::request<http::string_body> request = parser->release();
    parser.reset();

    const bool keep_alive = request.keep_alive();
    ConnectionHeader connection = ConnectionHeader::none;
    if (!keep_alive)
      connection = ConnectionHeader::close;
    else if (request.version() < 11)
      connection = ConnectionHeader::keep_alive;

    responses.push_back(route(request, connection));
    if (config.coalesce_head_and_body) coalesce(responses.back());
    if (!keep_alive) {
      responses.back().close_after = true;
      stop_reading();
    }
  }

  // Moves a small in-memory body into the head's write.
  void coalesce(Response& response) const {
    if (response.zero_body_bytes != 0 || response.owned_body.size() > write_slice) return;
    response.head += response.owned_body;
    response.owned_body.clear();
  }

  Response route(const http::request<http::string_body>& request, ConnectionHeader connection) {
    std::string_view target(request.target().data(), request.target().size());
    target = target.substr(0, target.find('?'));  // the query string does not select an endpoint
    const http::verb method = request.method();

    if (target == kPingPath) {
      if (method != http::verb::get)
        return text_response(405, "method not allowed", connection, "GET");
      Response response;
      response.owned_body = std::string(kPingBody);
      response.head = format_head(200, "application/json", response.owned_body.size(), connection);
      return response;
    }
    if (target.starts_with(kDownloadPrefix)) {
      if (method != http::verb::get)
        return text_response(405, "method not allowed", connection, "GET");
      const auto size =
          parse_download_size(target.substr(kDownloadPrefix.size()), config.max_download_bytes);
      if (!size) return text_response(400, "bad download size", connection);
      Response response;
      response.zero_body_bytes = *size;
      response.head = format_head(200, "application/octet-stream", *size, connection);
      return response;
    }
    if (target == kEchoPath) {
      if (method != http::verb::post)
        return text_response(405, "method not allowed", connection, "POST");
      Response response;
      response.owned_body = request.body();
      response.head =
          format_head(200, "application/octet-stream", response.owned_body.size(), connection);
      return response;
    }
    return text_response(404, "not found", connection);
  }

  std::span<const std::byte> current_write() const {
    if (responses.empty()) return {};
    const Response& front = responses.front();
    if (front.head_sent < front.head.size()) {
      return std::as_bytes(std::span(front.head)).subspan(front.head_sent);
    }
    const std::uint64_t remaining = front.body_size() - front.body_sent;
    const auto slice = static_cast<std::size_t>(std::min<std::uint64_t>(remaining, write_slice));
    if (front.zero_body_bytes != 0) return zero_bytes(slice);
    return std::as_bytes(std::span(front.owned_body))
        .subspan(static_cast<std::size_t>(front.body_sent), slice);
  }

  void advance() {
    if (responses.empty()) return;
    Response& front = responses.front();
    const std::size_t written = current_write().size();
    if (front.head_sent < front.head.size()) {
      front.head_sent += written;
    } else {
      front.body_sent += written;
    }
    if (!front.finished()) return;
    if (!front.interim) ++served;
    if (front.close_after) close_when_drained = true;
    responses.pop_front();
    // Writing freed queue room: parse requests held back while the queue was full.
    parse_available();
  }
};

ServerConnection::ServerConnection(ServerConfig config) : impl_(std::make_unique<Impl>(config)) {}
ServerConnection::~ServerConnection() = default;
ServerConnection::ServerConnection(ServerConnection&&) noexcept = default;
ServerConnection& ServerConnection::operator=(ServerConnection&&) noexcept = default;

void ServerConnection::on_receive(std::span<const std::byte> data) { impl_->receive(data); }
void ServerConnection::on_peer_closed() { impl_->peer_closed(); }
std::span<const std::byte> ServerConnection::next_write() { return impl_->current_write(); }
void ServerConnection::write_done() { impl_->advance(); }
bool ServerConnection::next_write_is_zeros() const {
  if (impl_->responses.empty()) return false;
  const auto& front = impl_->responses.front();
  return front.head_sent >= front.head.size() && front.zero_body_bytes != 0;
}

bool ServerConnection::should_close() const {
  return impl_->close_when_drained && impl_->responses.empty();
}

std::uint64_t ServerConnection::requests_served() const { return impl_->served; }
bool ServerConnection::receiving_request_head() const { return impl_->receiving_head(); }
void ServerConnection::on_head_timeout() { impl_->head_timed_out(); }

}  // namespace tb::servercore
