// The load generator's per-connection protocol: the window, in-order matching of pipelined
// responses with their send times, response checks, and any split of the input.
#include "twinbench/loadbench/pipelined_exchange.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace tb {
namespace {

using std::chrono::milliseconds;

std::shared_ptr<const std::vector<loadbench::LoadRequest>> echo_requests(const std::string& body) {
  return std::make_shared<const std::vector<loadbench::LoadRequest>>(
      std::vector<loadbench::LoadRequest>{
          {loadbench::format_load_request("POST", "/echo", "h", body), body, std::nullopt}});
}

std::string response(const std::string& body, const std::string& extra_headers = "",
                     int status = 200) {
  return "HTTP/1.1 " + std::to_string(status) +
         " OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" +
         body;
}

TEST(FormatLoadRequest, PostHasLengthAndBody) {
  EXPECT_EQ(loadbench::format_load_request("POST", "/echo", "127.0.0.1", "abc"),
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\n"
            "Content-Length: 3\r\n\r\nabc");
  EXPECT_EQ(loadbench::format_load_request("GET", "/p", "h", ""),
            "GET /p HTTP/1.1\r\nHost: h\r\n\r\n");
}

TEST(PipelinedExchange, FillsTheWindowAndRefillsAsResponsesArrive) {
  const auto requests = echo_requests("xy");
  loadbench::PipelinedExchange exchange(requests, 3);
  const std::string sent = exchange.take_requests(Time(milliseconds(1)));
  EXPECT_EQ(sent, requests->front().bytes + requests->front().bytes + requests->front().bytes);
  EXPECT_EQ(exchange.outstanding(), 3u);
  EXPECT_TRUE(exchange.take_requests(Time(milliseconds(2))).empty());  // window full

  std::vector<loadbench::PipelinedExchange::Completion> done;
  const std::string two = response("xy") + response("xy");
  exchange.on_receive(two, Time(milliseconds(5)), done);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].sent, Time(milliseconds(1)));
  EXPECT_EQ(done[0].answered, Time(milliseconds(5)));
  EXPECT_EQ(done[1].body_bytes, 2u);
  EXPECT_EQ(exchange.outstanding(), 1u);
  EXPECT_EQ(exchange.take_requests(Time(milliseconds(6))).size(),
            2 * requests->front().bytes.size());
  EXPECT_FALSE(exchange.ended());
}

TEST(PipelinedExchange, MatchesResponsesInOrderWithTheirOwnSendTimes) {
  loadbench::PipelinedExchange exchange(echo_requests("a"), 1);
  std::vector<loadbench::PipelinedExchange::Completion> done;
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(exchange.take_requests(Time(milliseconds(10 * i))).empty());
    exchange.on_receive(response("a"), Time(milliseconds(10 * i + 3)), done);
  }
  ASSERT_EQ(done.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(done[i].answered - done[i].sent, milliseconds(3)) << i;
}

TEST(PipelinedExchange, AnySplitOfTheInputGivesTheSameCompletions) {
  const std::string body(300, 'q');
  const std::string stream = response(body) + response(body) + response(body);
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{64}, stream.size()}) {
    loadbench::PipelinedExchange exchange(echo_requests(body), 3);
    exchange.take_requests(Time(0));
    std::vector<loadbench::PipelinedExchange::Completion> done;
    for (std::size_t at = 0; at < stream.size(); at += piece)
      exchange.on_receive(std::string_view(stream).substr(at, piece), Time(milliseconds(1)), done);
    EXPECT_EQ(done.size(), 3u) << "pieces of " << piece;
    EXPECT_FALSE(exchange.ended()) << exchange.error();
  }
}

TEST(PipelinedExchange, WrongEchoEndsWithAnError) {
  loadbench::PipelinedExchange exchange(echo_requests("abc"), 2);
  exchange.take_requests(Time(0));
  std::vector<loadbench::PipelinedExchange::Completion> done;
  exchange.on_receive(response("abd"), Time(1), done);
  EXPECT_TRUE(done.empty());
  EXPECT_TRUE(exchange.ended());
  EXPECT_NE(exchange.error().find("echoed body differs"), std::string::npos) << exchange.error();
  EXPECT_TRUE(exchange.take_requests(Time(2)).empty());
}

TEST(PipelinedExchange, GarbageStatusAndUnaskedResponsesAreErrors) {
  std::vector<loadbench::PipelinedExchange::Completion> done;
  {
    loadbench::PipelinedExchange exchange(echo_requests("a"), 1);
    exchange.take_requests(Time(0));
    exchange.on_receive("certainly not HTTP\r\n\r\n", Time(1), done);
    EXPECT_NE(exchange.error().find("malformed response"), std::string::npos) << exchange.error();
  }
  {
    loadbench::PipelinedExchange exchange(echo_requests("a"), 1);
    exchange.take_requests(Time(0));
    exchange.on_receive(response("a", "", 404), Time(1), done);
    EXPECT_EQ(exchange.error(), "status 404");
  }
  {
    loadbench::PipelinedExchange exchange(echo_requests("a"), 1);
    exchange.take_requests(Time(0));
    exchange.on_receive(response("a") + response("a"), Time(1), done);
    EXPECT_EQ(exchange.error(), "a response no request asked for");
  }
  EXPECT_EQ(done.size(), 1u);  // only the one good response of the last case
}

TEST(PipelinedExchange, ExpectedSizeIsChecked) {
  auto requests = std::make_shared<const std::vector<loadbench::LoadRequest>>(
      std::vector<loadbench::LoadRequest>{{"GET /d HTTP/1.1\r\n\r\n", std::nullopt, 4}});
  loadbench::PipelinedExchange exchange(requests, 1);
  exchange.take_requests(Time(0));
  std::vector<loadbench::PipelinedExchange::Completion> done;
  exchange.on_receive(response("12345"), Time(1), done);
  EXPECT_EQ(exchange.error(), "body of 5 bytes, expected 4");
}

// A peer announcing a terabyte is refused as the head ends, before anything is reserved for it
// (it ran the load generator out of memory: pipelined_exchange_fuzz's first finding, whose input
// is in tests/fuzz/corpus/pipelined_exchange/terabyte_content_length).
TEST(PipelinedExchange, AHugeContentLengthIsRefusedBeforeItsBodyIsReserved) {
  loadbench::PipelinedExchange exchange(echo_requests("abc"), 1);
  exchange.take_requests(Time(0));
  std::vector<loadbench::PipelinedExchange::Completion> done;
  exchange.on_receive(std::string("HTTP/1.1 200 OK\r\nContent-Length: 1000000000003\r\n\r\nabc"),
                      Time(1), done);
  EXPECT_TRUE(exchange.ended());
  EXPECT_NE(exchange.error().find("malformed response: body limit exceeded"), std::string::npos)
      << exchange.error();
  EXPECT_TRUE(done.empty());
}

TEST(PipelinedExchange, ConnectionCloseEndsAfterThatResponse) {
  loadbench::PipelinedExchange exchange(echo_requests("a"), 4);
  exchange.take_requests(Time(0));
  std::vector<loadbench::PipelinedExchange::Completion> done;
  exchange.on_receive(response("a", "Connection: close\r\n") + response("a"), Time(1), done);
  EXPECT_EQ(done.size(), 1u);
  EXPECT_EQ(exchange.error(), "closed");
}

TEST(PipelinedExchange, RequestsAreSentInTurnFromTheGivenOffset) {
  auto requests = std::make_shared<const std::vector<loadbench::LoadRequest>>(
      std::vector<loadbench::LoadRequest>{{"A", std::nullopt, std::nullopt},
                                          {"B", std::nullopt, std::nullopt},
                                          {"C", std::nullopt, std::nullopt}});
  loadbench::PipelinedExchange exchange(requests, 4, 1);
  EXPECT_EQ(exchange.take_requests(Time(0)), "BCAB");
}

}  // namespace
}  // namespace tb
