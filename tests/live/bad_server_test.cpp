// Over real sockets, a server that misbehaves ends each model's request with a clean error.
#include <gtest/gtest.h>

#include <thread>

#include <boost/asio.hpp>

#include "twinbench/live/live_backend.hpp"
#include "twinbench/clientcore/c3http_model.hpp"
#include "twinbench/clientcore/http_request_model.hpp"

namespace tb {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;

// Accepts connections on 127.0.0.1 and answers each first read with `reply`, then closes or not.
class BadServer {
 public:
  BadServer(std::string reply, bool close_after)
      : acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}),
        reply_(std::move(reply)),
        close_(close_after) {
    accept();
    thread_ = std::thread([this] { io_.run_for(60s); });
  }
  ~BadServer() {
    io_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()) + "/";
  }

 private:
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
      if (ec) return;
      auto s = std::make_shared<asio::ip::tcp::socket>(std::move(socket));
      auto buf = std::make_shared<std::array<char, 4096>>();
      s->async_read_some(
          asio::buffer(*buf), [this, s, buf](boost::system::error_code ec, std::size_t) {
            if (ec) return;
            asio::async_write(
                *s, asio::buffer(reply_), [this, s](boost::system::error_code, std::size_t) {
                  if (close_)
                    s->close();
                  else
                    held_.push_back(s);  // keep it open: the client must give up by itself
                });
          });
      accept();
    });
  }
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_;
  std::string reply_;
  bool close_;
  std::vector<std::shared_ptr<asio::ip::tcp::socket>> held_;
  std::thread thread_;
};

Completion run_once(ClientModel& model, live::LiveBackend& live, FrameLoop& frames,
                    const std::string& url) {
  std::optional<Completion> result;
  frames.await_process_frame([&] {
    RequestSpec spec;
    spec.url = url;
    model.request(spec, [&](const Completion& c) { result = c; });
  });
  EXPECT_TRUE(live.backend().run_until([&] { return result.has_value(); }, 20s));
  model.cancel();
  Completion cancelled;
  cancelled.result = RequestResult::kCancelled;
  return result.value_or(cancelled);
}

TEST(BadServer, ModelsEndWithCleanErrors) {
  struct Case {
    const char* name;
    std::string reply;
    bool close_after;
  };
  const std::vector<Case> cases = {
      {"garbage", "SSH-2.0-OpenSSH_9.2\r\n\r\n", false},
      {"closes_mid_body", "HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\nabc", true},
      {"closes_before_head", "HTTP/1.1 200", true},
      {"endless_header", "HTTP/1.1 200 OK\r\nX-Endless: " + std::string(2 << 20, 'a'), false},
  };
  for (const auto& c : cases) {
    BadServer server(c.reply, c.close_after);
    live::LiveBackend live;
    auto& b = live.backend();
    FrameLoop frames(b.scheduler, FrameLoopConfig{120, Duration{0}});
    frames.start();
    ModelRuntime rt{frames, b.threads, b.transports, b.resolver, &b.sinks};
    HttpRequestModel nat(rt, {});
    C3HttpOptions threaded;
    threaded.use_threads = true;
    C3HttpModel c3(rt, threaded);
    for (ClientModel* model : {static_cast<ClientModel*>(&nat), static_cast<ClientModel*>(&c3)}) {
      const Completion done = run_once(*model, live, frames, server.url());
      EXPECT_EQ(done.result, RequestResult::kConnectionError) << c.name << ": " << done.error;
    }
    frames.stop();
  }
}

}  // namespace
}  // namespace tb
