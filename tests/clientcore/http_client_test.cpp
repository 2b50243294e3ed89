// HttpClient on its own: Godot's HTTPClient reading rules and URL parsing.
#include <gtest/gtest.h>

#include <boost/asio/ip/address.hpp>

#include "clientcore/model_fixture.hpp"
#include "twinbench/clientcore/url.hpp"

namespace tb::testing {
namespace {

// Drives a bare client through connect and request on a zero-latency memory link.
class ClientBench {
 public:
  explicit ClientBench(std::function<std::unique_ptr<Peer>()> peers = nullptr)
      : bench(60, LinkConfig{Duration{0}, 0}, std::move(peers)),
        client(bench.network, bench.resolver) {}
  void settle() {
    bench.scheduler.run_until([] { return false; },
                              bench.scheduler.now() + std::chrono::milliseconds(1));
  }
  void get(const std::string& target) {
    client.connect_to_host("127.0.0.1", 8927);
    settle();
    client.poll();
    ASSERT_EQ(client.status(), HttpStatus::kConnected);
    ASSERT_TRUE(client.request("GET", target));
    client.poll();  // sends
    settle();
    client.poll();  // reads the head
  }
  ModelBench bench;
  HttpClient client;
};

TEST(HttpClient, NonChunkedReadsAreBoundedByReadChunkSize) {
  ClientBench b;
  b.get("/api/benchmark/download/1048576/");
  ASSERT_EQ(b.client.status(), HttpStatus::kBody);
  EXPECT_EQ(b.client.response_body_length(), 1048576);
  std::size_t reads = 0, total = 0;
  while (b.client.status() == HttpStatus::kBody && reads < 100) {
    const auto chunk = b.client.read_response_body_chunk();
    EXPECT_EQ(chunk.size(), 65536u);
    total += chunk.size();
    ++reads;
  }
  EXPECT_EQ(reads, 16u);
  EXPECT_EQ(total, 1048576u);
  EXPECT_EQ(b.client.status(), HttpStatus::kConnected);  // body end: ready for the next request
}

TEST(HttpClient, ReadReturnsWhatHasArrivedWithoutWaiting) {
  ClientBench b;
  b.client.set_read_chunk_size(1 << 20);
  b.get("/api/benchmark/download/1000/");
  const auto chunk = b.client.read_response_body_chunk();
  EXPECT_EQ(chunk.size(), 1000u);  // less than the chunk size: everything there is
}

TEST(HttpClient, ChunkedReadsReturnOneHttpChunkEach) {
  ClientBench b(scripted_peers(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
      false));
  b.get("/");
  ASSERT_TRUE(b.client.is_response_chunked());
  EXPECT_EQ(b.client.read_response_body_chunk().size(), 3u);
  EXPECT_EQ(b.client.read_response_body_chunk().size(), 2u);
  EXPECT_EQ(b.client.status(),
            HttpStatus::kBody);  // like Godot, the last-chunk marker is a read of its own
  EXPECT_TRUE(b.client.read_response_body_chunk().empty());
  EXPECT_EQ(b.client.status(), HttpStatus::kConnected);
}

TEST(HttpClient, ResponseWithoutLengthOnKeptAliveConnectionHasNoBody) {
  ClientBench b(scripted_peers("HTTP/1.1 204 No Content\r\n\r\n", false));
  b.get("/");
  EXPECT_EQ(b.client.status(), HttpStatus::kConnected);
  EXPECT_EQ(b.client.response_code(), 204);
}

TEST(HttpClient, ReadUntilCloseWhenTheServerCloses) {
  ClientBench b(scripted_peers("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil-eof", true));
  b.get("/");
  ASSERT_EQ(b.client.status(), HttpStatus::kBody);
  EXPECT_EQ(b.client.response_body_length(), -1);
  const auto chunk = b.client.read_response_body_chunk();
  EXPECT_EQ(chunk.size(), 9u);
  b.client.read_response_body_chunk();  // sees EOF
  EXPECT_EQ(b.client.status(), HttpStatus::kDisconnected);
  EXPECT_FALSE(b.client.response_keep_alive());
}

TEST(HttpClient, RequestOnlyWhenConnected) {
  ClientBench b;
  EXPECT_FALSE(b.client.request("GET", "/"));
  b.client.connect_to_host("127.0.0.1", 8927);
  EXPECT_EQ(b.client.status(), HttpStatus::kConnecting);
  EXPECT_FALSE(b.client.request("GET", "/"));
}

TEST(Url, ParsesWhatScenariosUse) {
  auto u = parse_url("http://127.0.0.1:8927/api/benchmark/ping/");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, 8927);
  EXPECT_EQ(u->target, "/api/benchmark/ping/");
  auto s = parse_url("https://example.com");
  ASSERT_TRUE(s);
  EXPECT_TRUE(s->tls());
  EXPECT_EQ(s->port, 443);
  EXPECT_EQ(s->target, "/");
  auto v6 = parse_url("http://[::1]:80/x");
  ASSERT_TRUE(v6);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_FALSE(parse_url("ftp://x/"));
  EXPECT_FALSE(parse_url("http://:80/"));
  EXPECT_FALSE(parse_url("http://h:99999/"));
  EXPECT_FALSE(parse_url("http://h:12a/"));
}

TEST(Url, IpLiterals) {
  EXPECT_TRUE(is_ip_literal("127.0.0.1"));
  EXPECT_TRUE(is_ip_literal("::1"));
  EXPECT_FALSE(is_ip_literal("localhost"));
}

// The client core's own parser answers as Asio's make_address, which the live resolver asks.
TEST(Url, IpLiteralsAsAsioReadsThem) {
  const std::vector<std::string> hosts = {
      "0.0.0.0", "255.255.255.255", "256.1.1.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.04",
      "1..2.3", "1.2.3.4.", ".1.2.3", "1.2.3.a", "1234.1.1.1", "", " ", "1.2.3.4 ", "::", ":::",
      "::1", "1::", "1:", ":1", "1::2::3", "fe80::1%eth0", "fe80::1%", "::ffff:1.2.3.4",
      "::ffff:1.2.3", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7::", "1:2:3:4:5:6::7",
      "1:2:3:4:5:6:7::8", "1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:7:1.2.3.4", "12345::1", "g::1",
      "ABCD:ef01::", "::1.2.3.4", "1.2.3.4::", "[::1]", "example.com", "localhost", "1e100.net"};
  for (const std::string& host : hosts) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(host, ec);
    EXPECT_EQ(is_ip_literal(host), !ec) << "'" << host << "'";
  }
}

}  // namespace
}  // namespace tb::testing
