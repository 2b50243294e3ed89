// C3Http's Session: reuse of CONNECTED keep-alive clients only.
#include <gtest/gtest.h>

#include "clientcore/model_fixture.hpp"

namespace tb::testing {
namespace {

const LinkConfig kLink{std::chrono::milliseconds(10), 0};

TEST(Session, ReusesAConnectedClient) {
  ModelBench bench(60, kLink);
  Session session(bench.scheduler);
  C3HttpOptions options;
  options.session = &session;
  C3HttpModel c3s(bench.runtime(), options);
  const Measured first = bench.run(c3s, ModelBench::get("/api/benchmark/ping/"));
  const Measured second = bench.run(c3s, ModelBench::get(ModelBench::download(10240)));
  EXPECT_EQ(second.completion.result, RequestResult::kSuccess);
  EXPECT_FALSE(first.completion.reused_connection);
  EXPECT_TRUE(second.completion.reused_connection);
  EXPECT_EQ(bench.network.connections_accepted(), 1u);
  EXPECT_EQ(*bench.requests, 2u);
  // Without the handshake the reused request is one round trip shorter, at least.
  EXPECT_LE(second.elapsed() + 2 * kLink.one_way_delay, first.elapsed());
}

TEST(Session, NeverReusesAConnectionTheServerClosed) {
  // A keep-alive response, after which the server closes the idle connection anyway.
  ModelBench bench(
      60, kLink,
      scripted_peers("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", /*close_after=*/true));
  Session session(bench.scheduler);
  C3HttpOptions options;
  options.session = &session;
  C3HttpModel c3s(bench.runtime(), options);
  const Measured first = bench.run(c3s, ModelBench::get("/"));
  ASSERT_EQ(first.completion.result, RequestResult::kSuccess) << first.completion.error;
  const Measured second = bench.run(c3s, ModelBench::get("/"));
  EXPECT_EQ(second.completion.result, RequestResult::kSuccess) << second.completion.error;
  EXPECT_FALSE(second.completion.reused_connection);
  EXPECT_EQ(bench.network.connections_accepted(), 2u);
}

TEST(Session, DoesNotPoolConnectionCloseResponses) {
  ModelBench bench(
      60, kLink,
      scripted_peers("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", false));
  Session session(bench.scheduler);
  C3HttpOptions options;
  options.session = &session;
  C3HttpModel c3s(bench.runtime(), options);
  bench.run(c3s, ModelBench::get("/"));
  EXPECT_EQ(session.idle(Session::Key{"127.0.0.1", 8927, false}), 0u);
  const Measured second = bench.run(c3s, ModelBench::get("/"));
  EXPECT_FALSE(second.completion.reused_connection);
  EXPECT_EQ(bench.network.connections_accepted(), 2u);
}

TEST(Session, DropsClientsIdleLongerThanTheTimeout) {
  ModelBench bench(60, kLink);
  Session session(bench.scheduler, SessionOptions{6, std::chrono::seconds(60)});
  C3HttpOptions options;
  options.session = &session;
  C3HttpModel c3s(bench.runtime(), options);
  bench.run(c3s, ModelBench::get("/api/benchmark/ping/"));
  bench.scheduler.run_until([] { return false; }, bench.scheduler.now() + std::chrono::seconds(61));
  const Measured late = bench.run(c3s, ModelBench::get("/api/benchmark/ping/"));
  EXPECT_FALSE(late.completion.reused_connection);
  EXPECT_EQ(bench.network.connections_accepted(), 2u);
}

TEST(Session, HonoursTheConnectionLimitPerHost) {
  VirtualScheduler clock;
  Session session(clock, SessionOptions{2, std::chrono::seconds(60)});
  ModelBench bench(60, kLink);
  const Session::Key key{"127.0.0.1", 8927, false};
  auto a = session.acquire(key, bench.network, bench.resolver, {});
  auto b = session.acquire(key, bench.network, bench.resolver, {});
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(session.acquire(key, bench.network, bench.resolver, {}).has_value());
  session.release(key, std::move(a->client));  // not connected: dropped, but the slot frees
  EXPECT_TRUE(session.acquire(key, bench.network, bench.resolver, {}).has_value());
}

TEST(Session, ThreadedVariantReusesToo) {
  ModelBench bench(60, kLink);
  Session session(bench.scheduler);
  C3HttpOptions options;
  options.session = &session;
  options.use_threads = true;
  C3HttpModel c3s_thr(bench.runtime(), options);
  bench.run(c3s_thr, ModelBench::get("/api/benchmark/ping/"));
  const Measured second = bench.run(c3s_thr, ModelBench::get("/api/benchmark/ping/"));
  EXPECT_TRUE(second.completion.reused_connection);
  EXPECT_EQ(bench.network.connections_accepted(), 1u);
}

}  // namespace
}  // namespace tb::testing
