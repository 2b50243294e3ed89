#include "twinbench/servercore/server_connection.hpp"

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/asio/buffer.hpp>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace http = boost::beast::http;
using tb::servercore::ServerConfig;
using tb::servercore::ServerConnection;
using Response = http::response<http::string_body>;

constexpr std::size_t kSlice = 64 * 1024;

std::span<const std::byte> as_bytes(std::string_view text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

std::string get(std::string_view target, std::string_view extra_headers = {}) {
  return "GET " + std::string(target) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
         std::string(extra_headers) + "\r\n";
}

// Everything the server wrote, both as one byte string and as the sizes of its individual writes.
struct Written {
  std::string bytes;
  std::vector<std::size_t> write_sizes;
};

// Performs every pending write, the way a transport would. Bounded so a bug cannot hang the test.
Written drain(ServerConnection& connection) {
  Written written;
  for (int guard = 0; guard < 100000; ++guard) {
    const auto chunk = connection.next_write();
    if (chunk.empty()) break;
    written.bytes.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    written.write_sizes.push_back(chunk.size());
    connection.write_done();
  }
  return written;
}

// Parses a byte string of back-to-back responses with Beast's response parser.
std::vector<Response> parse_responses(std::string_view bytes) {
  std::vector<Response> responses;
  while (!bytes.empty()) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    parser.eager(true);
    boost::beast::error_code ec;
    const std::size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_TRUE(parser.is_done()) << "incomplete response";
    if (ec || !parser.is_done()) break;
    bytes.remove_prefix(used);
    responses.push_back(parser.release());
  }
  return responses;
}

std::vector<Response> serve(ServerConnection& connection, std::string_view requests) {
  connection.on_receive(as_bytes(requests));
  return parse_responses(drain(connection).bytes);
}

TEST(ServerConnection, PingReturnsJsonBody) {
  ServerConnection connection;
  connection.on_receive(as_bytes(get("/api/benchmark/ping/")));
  const Written written = drain(connection);
  const auto responses = parse_responses(written.bytes);

  ASSERT_EQ(responses.size(), 1u);
  const Response& response = responses[0];
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response.body(), R"({"ok": true})");
  EXPECT_EQ(response[http::field::content_type], "application/json");
  EXPECT_EQ(response[http::field::content_length], "12");
  EXPECT_EQ(response[http::field::server], "twinbench");
  EXPECT_EQ(response.count(http::field::date), 0u);
  EXPECT_TRUE(response.keep_alive());
  // Head in one write, then the body.
  ASSERT_EQ(written.write_sizes.size(), 2u);
  EXPECT_EQ(written.write_sizes[1], 12u);
  EXPECT_EQ(connection.requests_served(), 1u);
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, ResponsesAreByteIdenticalAcrossConnections) {
  ServerConnection first;
  ServerConnection second;
  first.on_receive(as_bytes(get("/api/benchmark/ping/")));
  second.on_receive(as_bytes(get("/api/benchmark/ping/")));
  EXPECT_EQ(drain(first).bytes, drain(second).bytes);
}

class DownloadSize : public ::testing::TestWithParam<std::uint64_t> {};

TEST_P(DownloadSize, ServesZeroBytesInSlices) {
  const std::uint64_t size = GetParam();
  ServerConnection connection;
  connection.on_receive(as_bytes(get("/api/benchmark/download/" + std::to_string(size) + "/")));
  const Written written = drain(connection);
  const auto responses = parse_responses(written.bytes);

  ASSERT_EQ(responses.size(), 1u);
  const Response& response = responses[0];
  EXPECT_EQ(response.result_int(), 200u);
  EXPECT_EQ(response[http::field::content_type], "application/octet-stream");
  EXPECT_EQ(response[http::field::content_length], std::to_string(size));
  ASSERT_EQ(response.body().size(), size);
  EXPECT_TRUE(
      std::all_of(response.body().begin(), response.body().end(), [](char c) { return c == 0; }));

  // First write is the whole head; the body follows in full slices and one shorter tail.
  ASSERT_FALSE(written.write_sizes.empty());
  const std::size_t head_size = written.bytes.size() - size;
  EXPECT_EQ(written.write_sizes[0], head_size);
  const std::size_t body_writes = static_cast<std::size_t>((size + kSlice - 1) / kSlice);
  ASSERT_EQ(written.write_sizes.size(), 1 + body_writes);
  for (std::size_t i = 1; i < written.write_sizes.size(); ++i) {
    const std::uint64_t expected = std::min<std::uint64_t>(kSlice, size - (i - 1) * kSlice);
    EXPECT_EQ(written.write_sizes[i], expected) << "write " << i;
  }
  EXPECT_EQ(connection.requests_served(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, DownloadSize,
                         ::testing::Values(0u, 1u, 65536u, 65537u, 1024u * 1024u));

TEST(ServerConnection, HugeDownloadIsServedLazily) {
  // 16 GiB: only the head and a couple of slices are taken; nothing near the size is allocated.
  ServerConnection connection;
  connection.on_receive(as_bytes(get("/api/benchmark/download/17179869184/")));
  const auto head = connection.next_write();
  const std::string head_text(reinterpret_cast<const char*>(head.data()), head.size());
  EXPECT_NE(head_text.find("Content-Length: 17179869184\r\n"), std::string::npos);
  connection.write_done();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(connection.next_write().size(), kSlice);
    connection.write_done();
  }
  EXPECT_EQ(connection.requests_served(), 0u);
}

TEST(ServerConnection, SaysWhichWritesAreDownloadZeros) {
  // The simulated server sends a write it is told is zeros as a packet of zero bytes it does not
  // hold, so the flag must be set exactly on writes whose bytes are all zero: a download's body
  // slices, and neither its head nor another response's body.
  ServerConnection connection;
  EXPECT_FALSE(connection.next_write_is_zeros());  // nothing pending
  connection.on_receive(
      as_bytes(get("/api/benchmark/download/150000/") + get("/api/benchmark/ping/")));
  std::vector<bool> flags;
  std::size_t zero_bytes = 0;
  for (int guard = 0; guard < 100; ++guard) {
    const auto chunk = connection.next_write();
    if (chunk.empty()) break;
    const bool all_zero =
        std::all_of(chunk.begin(), chunk.end(), [](std::byte b) { return b == std::byte{0}; });
    flags.push_back(connection.next_write_is_zeros());
    if (flags.back()) {
      EXPECT_TRUE(all_zero) << "write " << flags.size() << " is flagged zeros but is not";
      zero_bytes += chunk.size();
    }
    connection.write_done();
  }
  // The download: its head, then 150000 bytes in three slices; the ping: its head and JSON body.
  EXPECT_EQ(flags, (std::vector<bool>{false, true, true, true, false, false}));
  EXPECT_EQ(zero_bytes, 150000u);
  EXPECT_FALSE(connection.next_write_is_zeros());
}

TEST(ServerConnection, NextWriteIsStableUntilWriteDone) {
  ServerConnection connection;
  connection.on_receive(as_bytes(get("/api/benchmark/ping/")));
  const auto first = connection.next_write();
  // More input (a pipelined request) must not move or change the pending write.
  connection.on_receive(as_bytes(get("/api/benchmark/ping/")));
  const auto again = connection.next_write();
  EXPECT_EQ(first.data(), again.data());
  EXPECT_EQ(first.size(), again.size());
}

TEST(ServerConnection, KeepAliveServesSequentialRequests) {
  ServerConnection connection;
  auto first = serve(connection, get("/api/benchmark/ping/"));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].result_int(), 200u);
  EXPECT_FALSE(connection.should_close());

  auto second = serve(connection, get("/api/benchmark/download/100/"));
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].body().size(), 100u);
  EXPECT_EQ(connection.requests_served(), 2u);
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, PipelinedRequestsAreServedInOrder) {
  ServerConnection connection;
  const auto responses =
      serve(connection, get("/api/benchmark/download/10/") + get("/api/benchmark/ping/") +
                            get("/nope") + get("/api/benchmark/download/3/"));
  ASSERT_EQ(responses.size(), 4u);
  EXPECT_EQ(responses[0].body().size(), 10u);
  EXPECT_EQ(responses[1].body(), R"({"ok": true})");
  EXPECT_EQ(responses[2].result_int(), 404u);
  EXPECT_EQ(responses[3].body().size(), 3u);
  EXPECT_EQ(connection.requests_served(), 4u);
}

TEST(ServerConnection, DeepPipelineIsHeldBackThenServed) {
  // More pipelined requests than the server queues: all are still answered, in order.
  constexpr int kRequests = 100;
  std::string requests;
  for (int i = 0; i < kRequests; ++i)
    requests += get("/api/benchmark/download/" + std::to_string(i) + "/");
  ServerConnection connection;
  const auto responses = serve(connection, requests);
  ASSERT_EQ(responses.size(), static_cast<std::size_t>(kRequests));
  for (int i = 0; i < kRequests; ++i)
    EXPECT_EQ(responses[i].body().size(), static_cast<std::size_t>(i));
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, PeerThatNeverReadsIsCutOff) {
  // A client that pipelines megabytes of requests and never reads the responses: the server keeps
  // bounded state, answers what it queued, then closes instead of buffering without limit.
  const std::string ping = get("/api/benchmark/ping/");
  std::string flood;
  while (flood.size() < 4 * 1024 * 1024) flood += ping;
  ServerConnection connection;
  connection.on_receive(as_bytes(flood));
  const auto responses = parse_responses(drain(connection).bytes);
  EXPECT_GT(responses.size(), 0u);
  EXPECT_LT(responses.size(), flood.size() / ping.size());
  for (const auto& response : responses) EXPECT_EQ(response.result_int(), 200u);
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, ByteByByteInputIsParsed) {
  const std::string requests = get("/api/benchmark/ping/") + get("/api/benchmark/download/70000/");
  ServerConnection connection;
  for (char c : requests) connection.on_receive(as_bytes(std::string_view(&c, 1)));
  const auto responses = parse_responses(drain(connection).bytes);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].body(), R"({"ok": true})");
  EXPECT_EQ(responses[1].body().size(), 70000u);
}

TEST(ServerConnection, ConnectionCloseClosesAfterTheWrites) {
  ServerConnection connection;
  // The second request follows a close and must be ignored.
  connection.on_receive(
      as_bytes(get("/api/benchmark/ping/", "Connection: close\r\n") + get("/api/benchmark/ping/")));
  EXPECT_FALSE(connection.should_close()) << "writes still pending";
  const auto responses = parse_responses(drain(connection).bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0][http::field::connection], "close");
  EXPECT_FALSE(responses[0].keep_alive());
  EXPECT_TRUE(connection.should_close());
  EXPECT_EQ(connection.requests_served(), 1u);
}

TEST(ServerConnection, Http10WithoutKeepAliveCloses) {
  ServerConnection connection;
  const auto responses = serve(connection, "GET /api/benchmark/ping/ HTTP/1.0\r\n\r\n");
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 200u);
  EXPECT_EQ(responses[0][http::field::connection], "close");
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, Http10WithKeepAliveStaysOpen) {
  ServerConnection connection;
  const auto responses =
      serve(connection, "GET /api/benchmark/ping/ HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0][http::field::connection], "keep-alive");
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, UnknownPathIs404AndKeepsTheConnection) {
  ServerConnection connection;
  const auto responses = serve(connection, get("/api/benchmark/unknown/"));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 404u);
  EXPECT_FALSE(responses[0].body().empty());
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, BadDownloadSizeIs400) {
  ServerConfig config;
  config.max_download_bytes = 1000;
  for (std::string_view target :
       {"/api/benchmark/download/abc/", "/api/benchmark/download/-1/", "/api/benchmark/download//",
        "/api/benchmark/download/12", "/api/benchmark/download/1001/",
        "/api/benchmark/download/99999999999999999999999/"}) {
    ServerConnection connection(config);
    const auto responses = serve(connection, get(target));
    ASSERT_EQ(responses.size(), 1u) << target;
    EXPECT_EQ(responses[0].result_int(), 400u) << target;
    EXPECT_FALSE(connection.should_close()) << target;
  }
}

TEST(ServerConnection, WrongMethodIs405WithAllow) {
  ServerConnection connection;
  const auto responses = serve(connection,
                               "POST /api/benchmark/ping/ HTTP/1.1\r\nContent-Length: 0\r\n\r\n"
                               "GET /echo HTTP/1.1\r\n\r\n");
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].result_int(), 405u);
  EXPECT_EQ(responses[0][http::field::allow], "GET");
  EXPECT_EQ(responses[1].result_int(), 405u);
  EXPECT_EQ(responses[1][http::field::allow], "POST");
}

TEST(ServerConnection, MalformedRequestIs400AndCloses) {
  for (std::string_view garbage :
       {"GARBAGE\r\n\r\n", "GET / HTTP/9.x\r\n\r\n", "GET / HTTP/1.1\r\nBad Header\r\n\r\n",
        "\x01\x02\x03\r\n\r\n"}) {
    ServerConnection connection;
    const auto responses = serve(connection, garbage);
    ASSERT_EQ(responses.size(), 1u) << garbage;
    EXPECT_EQ(responses[0].result_int(), 400u);
    EXPECT_EQ(responses[0][http::field::connection], "close");
    EXPECT_TRUE(connection.should_close());
  }
}

TEST(ServerConnection, EndlessHeaderIs431AndCloses) {
  ServerConnection connection;
  connection.on_receive(as_bytes("GET /api/benchmark/ping/ HTTP/1.1\r\n"));
  const std::string filler_line = "X-Filler: " + std::string(1000, 'a') + "\r\n";
  std::size_t fed = 0;
  while (fed < 1024 * 1024) {  // 1 MiB of header that never ends
    connection.on_receive(as_bytes(filler_line));
    fed += filler_line.size();
  }
  const auto responses = parse_responses(drain(connection).bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 431u);
  EXPECT_EQ(responses[0][http::field::connection], "close");
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, EndlessHeaderInOneChunkIs431) {
  ServerConnection connection;
  const std::string request = "GET / HTTP/1.1\r\nX-Filler: " + std::string(1024 * 1024, 'a');
  const auto responses = serve(connection, request);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 431u);
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, EchoReturnsTheBody) {
  ServerConnection connection;
  const std::string body = std::string("hello\0world", 11) + std::string(100000, 'x');
  const auto responses =
      serve(connection, "POST /echo HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) +
                            "\r\n\r\n" + body);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 200u);
  EXPECT_EQ(responses[0].body(), body);
  EXPECT_FALSE(connection.should_close());
}

TEST(ServerConnection, ChunkedEchoIsDecoded) {
  ServerConnection connection;
  const auto responses = serve(connection,
                               "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                               "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n");
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].body(), "hello world");
  EXPECT_EQ(responses[0][http::field::content_length], "11");
}

TEST(ServerConnection, OversizedEchoIs413AndCloses) {
  ServerConfig config;
  config.max_echo_bytes = 16;
  ServerConnection connection(config);
  const auto responses =
      serve(connection, "POST /echo HTTP/1.1\r\nContent-Length: 17\r\n\r\n" + std::string(17, 'x'));
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 413u);
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, ExpectContinueGetsInterimResponse) {
  ServerConnection connection;
  connection.on_receive(
      as_bytes("POST /echo HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n\r\n"));
  const auto interim = parse_responses(drain(connection).bytes);
  ASSERT_EQ(interim.size(), 1u);
  EXPECT_EQ(interim[0].result_int(), 100u);
  EXPECT_EQ(connection.requests_served(), 0u);

  const auto final_responses = serve(connection, "abc");
  ASSERT_EQ(final_responses.size(), 1u);
  EXPECT_EQ(final_responses[0].body(), "abc");
  EXPECT_EQ(connection.requests_served(), 1u);
}

TEST(ServerConnection, PeerCloseStillAnswersCompleteRequests) {
  ServerConnection connection;
  connection.on_receive(as_bytes(get("/api/benchmark/ping/") + "GET /api/bench"));
  connection.on_peer_closed();
  EXPECT_FALSE(connection.should_close());
  const auto responses = parse_responses(drain(connection).bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, PeerCloseWhenIdleClosesAtOnce) {
  ServerConnection connection;
  connection.on_peer_closed();
  EXPECT_TRUE(connection.next_write().empty());
  EXPECT_TRUE(connection.should_close());
}

TEST(ServerConnection, WriteDoneWithoutPendingWriteIsHarmless) {
  ServerConnection connection;
  connection.write_done();
  EXPECT_TRUE(connection.next_write().empty());
  EXPECT_EQ(connection.requests_served(), 0u);
}

TEST(ServerConnection, SurvivesRandomInput) {
  // Deterministic fuzzing: random bytes and mutated requests in random splits never crash and
  // always leave a drainable connection.
  std::mt19937 random(12345);
  const std::string valid =
      get("/api/benchmark/download/5/") + "POST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd";
  for (int round = 0; round < 300; ++round) {
    std::string input = valid;
    for (int i = 0; i < round % 20; ++i)
      input[random() % input.size()] = static_cast<char>(random() % 256);
    if (round % 3 == 0) {
      input.clear();
      for (int i = 0; i < 2000; ++i) input.push_back(static_cast<char>(random() % 256));
    }
    ServerConnection connection;
    std::size_t offset = 0;
    while (offset < input.size()) {
      const std::size_t piece = std::min<std::size_t>(1 + random() % 64, input.size() - offset);
      connection.on_receive(as_bytes(std::string_view(input).substr(offset, piece)));
      offset += piece;
      if (random() % 2 == 0) drain(connection);
    }
    connection.on_peer_closed();
    drain(connection);
    EXPECT_TRUE(connection.should_close());
    EXPECT_TRUE(connection.next_write().empty());
  }
}

}  // namespace

// The two-write response of the stand-in (head, then body) and the coalesced one write, with the
// same bytes; pipelined echoes stay in order.
TEST(ServerConnection, CoalescedWritesPutHeadAndSmallBodyInOneWrite) {
  const std::string body = std::string("a\0b", 3) + std::string(1021, 'z');
  const std::string request =
      "POST /echo HTTP/1.1\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  ServerConnection split;
  split.on_receive(as_bytes(request + request));
  const Written two = drain(split);
  ServerConfig config;
  config.coalesce_head_and_body = true;
  ServerConnection coalesced(config);
  coalesced.on_receive(as_bytes(request + request));
  const Written one = drain(coalesced);

  EXPECT_EQ(two.write_sizes.size(), 4u);  // head, body, head, body
  ASSERT_EQ(one.write_sizes.size(), 2u);  // one write per response
  EXPECT_EQ(one.bytes, two.bytes);
  EXPECT_EQ(one.write_sizes[0], two.write_sizes[0] + two.write_sizes[1]);
  const auto responses = parse_responses(one.bytes);
  ASSERT_EQ(responses.size(), 2u);
  EXPECT_EQ(responses[0].body(), body);
  EXPECT_EQ(responses[1].body(), body);
  EXPECT_EQ(coalesced.requests_served(), 2u);
}

TEST(ServerConnection, CoalescingLeavesBodiesLargerThanASliceSplit) {
  ServerConfig config;
  config.coalesce_head_and_body = true;
  config.write_slice = 16;
  ServerConnection connection(config);
  const std::string body(40, 'q');
  connection.on_receive(as_bytes("POST /echo HTTP/1.1\r\nContent-Length: 40\r\n\r\n" + body));
  const Written written = drain(connection);
  ASSERT_EQ(written.write_sizes.size(), 4u);  // head, then 16 + 16 + 8
  EXPECT_EQ(written.write_sizes[1], 16u);
  EXPECT_EQ(parse_responses(written.bytes).at(0).body(), body);
}

// The head timeout's two questions: does the client owe the rest of a head, and what is said when
// it never comes.
TEST(ServerConnection, OwesAHeadOnlyBetweenItsFirstByteAndItsEnd) {
  ServerConnection connection;
  EXPECT_FALSE(connection.receiving_request_head()) << "an idle connection owes nothing";
  const std::string request = get("/api/benchmark/ping/");
  connection.on_receive(as_bytes(std::string_view(request).substr(0, 10)));
  EXPECT_TRUE(connection.receiving_request_head());
  connection.on_receive(as_bytes(std::string_view(request).substr(10)));
  EXPECT_FALSE(connection.receiving_request_head()) << "the head is complete";
  EXPECT_EQ(parse_responses(drain(connection).bytes).at(0).result_int(), 200u);
  // A POST whose head is in but whose body is not owes a body, not a head.
  connection.on_receive(as_bytes("POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc"));
  EXPECT_FALSE(connection.receiving_request_head());
}

TEST(ServerConnection, AHeadTimeoutIsAnswered408AndCloses) {
  ServerConnection connection;
  connection.on_receive(as_bytes("GET /api/benchmark/ping/ HTTP/1.1\r\nHo"));
  connection.on_head_timeout();
  EXPECT_FALSE(connection.receiving_request_head());
  const auto responses = parse_responses(drain(connection).bytes);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].result_int(), 408u);
  EXPECT_TRUE(connection.should_close());
  // Whatever trickles in afterwards is ignored.
  connection.on_receive(as_bytes("st: x\r\n\r\n"));
  EXPECT_TRUE(drain(connection).bytes.empty());
}
