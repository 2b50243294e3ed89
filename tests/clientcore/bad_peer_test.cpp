// A misbehaving server ends a request with a clean error result, never a crash or a hang.
#include <gtest/gtest.h>

#include "clientcore/model_fixture.hpp"

namespace tb::testing {
namespace {

struct BadPeerCase {
  const char* name;
  std::string reply;
  bool close_after;
  RequestResult expected;
};

std::vector<BadPeerCase> cases() {
  return {
      {"garbage", "HELLO THIS IS NOT HTTP\r\n\r\n", false, RequestResult::kConnectionError},
      {"closes_before_head", "HTTP/1.1 200 OK\r\nContent-Le", true,
       RequestResult::kConnectionError},
      {"closes_mid_body", "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\nabc", true,
       RequestResult::kConnectionError},
      {"endless_header", "HTTP/1.1 200 OK\r\nX-Endless: " + std::string(1 << 20, 'a'), false,
       RequestResult::kConnectionError},
      {"bad_chunk_size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false,
       RequestResult::kConnectionError},
  };
}

template <typename Model, typename Options>
void expect_clean_errors(Options options) {
  for (const auto& c : cases()) {
    ModelBench bench(60, LinkConfig{std::chrono::milliseconds(5), 0},
                     scripted_peers(c.reply, c.close_after));
    Model model(bench.runtime(), options);
    const Measured m = bench.run(model, ModelBench::get("/"));
    EXPECT_EQ(m.completion.result, c.expected) << c.name << ": " << m.completion.error;
    EXPECT_FALSE(m.completion.error.empty()) << c.name;
  }
}

TEST(BadPeer, HttpRequestReportsConnectionErrors) {
  expect_clean_errors<HttpRequestModel>(HttpRequestOptions{});
}
TEST(BadPeer, C3HttpReportsConnectionErrors) { expect_clean_errors<C3HttpModel>(C3HttpOptions{}); }

TEST(BadPeer, EndlessHeaderErrorNamesTheHead) {
  ModelBench bench(60, LinkConfig{std::chrono::milliseconds(5), 0},
                   scripted_peers("HTTP/1.1 200 OK\r\nX: " + std::string(1 << 20, 'a'), false));
  C3HttpModel c3(bench.runtime(), {});
  const Measured m = bench.run(c3, ModelBench::get("/"));
  EXPECT_NE(m.completion.error.find("head"), std::string::npos) << m.completion.error;
}

TEST(BadPeer, RefusedConnectionIsCantConnect) {
  ModelBench bench(60, LinkConfig{std::chrono::milliseconds(5), 0},
                   [] { return std::unique_ptr<Peer>(); });
  HttpRequestModel nat(bench.runtime(), {});
  C3HttpModel c3(bench.runtime(), {});
  EXPECT_EQ(bench.run(nat, ModelBench::get("/")).completion.result, RequestResult::kCantConnect);
  EXPECT_EQ(bench.run(c3, ModelBench::get("/")).completion.result, RequestResult::kCantConnect);
}

TEST(Chunked, BothModelsReassembleAChunkedBody) {
  const std::string reply =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
  for (bool c3_model : {false, true}) {
    ModelBench bench(60, LinkConfig{std::chrono::milliseconds(5), 0}, scripted_peers(reply, false));
    std::unique_ptr<ClientModel> model;
    if (c3_model)
      model = std::make_unique<C3HttpModel>(bench.runtime(), C3HttpOptions{});
    else
      model = std::make_unique<HttpRequestModel>(bench.runtime(), HttpRequestOptions{});
    const Measured m = bench.run(*model, ModelBench::get("/"));
    EXPECT_EQ(m.completion.result, RequestResult::kSuccess) << m.completion.error;
    EXPECT_EQ(m.completion.body_bytes, 11u);
  }
}

}  // namespace
}  // namespace tb::testing
