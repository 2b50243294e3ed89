// Parsers fed the same bytes whole and split at every byte (and a byte at a time) must come to
// the same outcome: HttpClient reading responses, ServerConnection reading requests. A stream
// socket may cut a message anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/servercore/server_connection.hpp"

namespace tb {
namespace {

// Serves the response in `pieces`: each read returns bytes of the current piece, and a piece's
// end is a would-block, so the client sees the cut. After the last piece: EOF or nothing more.
class PiecewiseTransport : public Transport {
 public:
  PiecewiseTransport(std::vector<std::string> pieces, bool close_after)
      : pieces_(pieces.begin(), pieces.end()), close_after_(close_after) {}
  void connect(const Endpoint&) override { connected_ = true; }
  TransportStatus status() override {
    if (!connected_) return TransportStatus::kIdle;
    if (closed_ || (pieces_.empty() && close_after_ && eof_seen_)) return TransportStatus::kClosed;
    return TransportStatus::kConnected;
  }
  std::size_t write_some(std::span<const std::byte> data) override { return data.size(); }
  ReadResult read_some(std::span<std::byte> out) override {
    if (cut_) {
      cut_ = false;
      return {ReadResult::Kind::kWouldBlock, 0};
    }
    if (pieces_.empty()) {
      if (!close_after_) return {ReadResult::Kind::kWouldBlock, 0};
      eof_seen_ = true;
      return {ReadResult::Kind::kEof, 0};
    }
    std::string& piece = pieces_.front();
    const std::size_t n = std::min(out.size(), piece.size());
    std::memcpy(out.data(), piece.data(), n);
    piece.erase(0, n);
    if (piece.empty()) {
      pieces_.pop_front();
      cut_ = true;
    }
    return {ReadResult::Kind::kData, n};
  }
  std::size_t available() override { return pieces_.empty() || cut_ ? 0 : pieces_.front().size(); }
  void close() override { closed_ = true; }
  std::string error() const override { return {}; }

 private:
  std::deque<std::string> pieces_;
  bool close_after_;
  bool connected_ = false;
  bool cut_ = false;
  bool eof_seen_ = false;
  bool closed_ = false;
};

class OneTransport : public TransportFactory {
 public:
  explicit OneTransport(std::unique_ptr<Transport> t) : t_(std::move(t)) {}
  std::unique_ptr<Transport> create() override { return std::move(t_); }

 private:
  std::unique_ptr<Transport> t_;
};

class NoResolver : public Resolver {
 public:
  Id start(const std::string&) override { return 1; }
  Status status(Id) override { return Status::kFailed; }
  std::string address(Id) override { return {}; }
  void forget(Id) override {}
};

struct ClientOutcome {
  HttpStatus status;
  int code;
  std::string body;
  bool keep_alive;
  bool operator==(const ClientOutcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const ClientOutcome& o) {
  return os << "status " << static_cast<int>(o.status) << ", code " << o.code << ", body "
            << o.body.size() << " bytes, keep-alive " << o.keep_alive;
}

ClientOutcome fetch(std::vector<std::string> pieces, bool close_after) {
  OneTransport transports(std::make_unique<PiecewiseTransport>(std::move(pieces), close_after));
  NoResolver resolver;
  HttpClient client(transports, resolver);
  client.connect_to_host("127.0.0.1", 80);
  for (int i = 0; i < 4 && client.status() != HttpStatus::kConnected; ++i) client.poll();
  EXPECT_TRUE(client.request("GET", "/"));
  std::string body;
  // Every poll and read a frame would make; bounded, since a piece boundary costs one round.
  for (int i = 0; i < 10000; ++i) {
    client.poll();
    if (client.status() == HttpStatus::kBody) {
      for (auto chunk = client.read_response_body_chunk(); !chunk.empty();
           chunk = client.read_response_body_chunk())
        body.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    }
    const HttpStatus s = client.status();
    if (s != HttpStatus::kRequesting && s != HttpStatus::kBody) break;
  }
  return {client.status(), client.has_response() ? client.response_code() : 0, body,
          client.has_response() && client.response_keep_alive()};
}

struct Response {
  const char* name;
  std::string bytes;
  bool close_after;
};

std::vector<Response> responses() {
  return {
      {"content-length",
       "HTTP/1.1 200 OK\r\nContent-Length: 12\r\nContent-Type: application/json\r\n\r\n{\"ok\": "
       "true}",
       false},
      {"chunked",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: "
       "chunked\r\n\r\n3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n",
       false},
      {"chunked with extension and trailer",
       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nwxyz\r\n0\r\nX-Trailer: "
       "1\r\n\r\n",
       false},
      {"no body", "HTTP/1.1 204 No Content\r\n\r\n", false},
      {"read until close", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end", true},
      {"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello", true},
      {"cut short", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", true},
      {"bad status line", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", false},
      {"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n",
       false},
  };
}

TEST(SplitFeed, HttpClientReachesTheSameOutcomeWhereverTheResponseIsCut) {
  for (const auto& r : responses()) {
    const ClientOutcome whole = fetch({r.bytes}, r.close_after);
    for (std::size_t at = 1; at < r.bytes.size(); ++at) {
      EXPECT_EQ(fetch({r.bytes.substr(0, at), r.bytes.substr(at)}, r.close_after), whole)
          << r.name << ", cut at byte " << at;
    }
    std::vector<std::string> bytes;
    for (char c : r.bytes) bytes.emplace_back(1, c);
    EXPECT_EQ(fetch(bytes, r.close_after), whole) << r.name << ", a byte at a time";
  }
}

TEST(SplitFeed, TheCorpusCoversSuccessesAndFailures) {
  // Guards the test above against a corpus that proves nothing: both kinds of outcome occur.
  int good = 0, bad = 0;
  for (const auto& r : responses()) {
    const ClientOutcome o = fetch({r.bytes}, r.close_after);
    (o.status == HttpStatus::kConnected || o.status == HttpStatus::kDisconnected) && o.code != 0
        ? ++good
        : ++bad;
  }
  EXPECT_GE(good, 4);
  EXPECT_GE(bad, 2);
}

struct ServerOutcome {
  std::string written;
  bool should_close;
  std::uint64_t served;
  bool operator==(const ServerOutcome&) const = default;
};

ServerOutcome serve(const std::vector<std::string>& pieces) {
  servercore::ServerConnection c;
  std::string written;
  auto drain = [&] {
    for (auto w = c.next_write(); !w.empty(); w = c.next_write()) {
      written.append(reinterpret_cast<const char*>(w.data()), w.size());
      c.write_done();
    }
  };
  for (const auto& p : pieces) {
    c.on_receive(std::as_bytes(std::span(p.data(), p.size())));
    drain();
  }
  return {written, c.should_close(), c.requests_served()};
}

TEST(SplitFeed, ServerConnectionAnswersTheSameWhereverTheRequestsAreCut) {
  const std::vector<std::pair<const char*, std::string>> requests = {
      {"ping", "GET /api/benchmark/ping/ HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"download", "GET /api/benchmark/download/100/ HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"echo", "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"},
      {"pipelined",
       "GET /api/benchmark/ping/ HTTP/1.1\r\nHost: x\r\n\r\nGET /api/benchmark/download/3/ "
       "HTTP/1.1\r\nHost: x\r\n\r\n"},
      {"close", "GET /api/benchmark/ping/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"},
      {"malformed", "GET /x HTTP/9.Z\r\n\r\n"},
  };
  for (const auto& [name, bytes] : requests) {
    const ServerOutcome whole = serve({bytes});
    EXPECT_FALSE(whole.written.empty()) << name << ": every request gets an answer";
    for (std::size_t at = 1; at < bytes.size(); ++at) {
      const ServerOutcome cut = serve({bytes.substr(0, at), bytes.substr(at)});
      EXPECT_EQ(cut.written, whole.written) << name << ", cut at byte " << at;
      EXPECT_EQ(cut.should_close, whole.should_close) << name << ", cut at byte " << at;
      EXPECT_EQ(cut.served, whole.served) << name << ", cut at byte " << at;
    }
  }
}

}  // namespace
}  // namespace tb
