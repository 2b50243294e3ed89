// The frame semantics of the client models (docs/architecture.md, "Client models"), on virtual time. Expected frame
// counts are derived in the comments from the engine's rules, not read off the code's output.
#include <gtest/gtest.h>

#include "clientcore/model_fixture.hpp"

namespace tb::testing {
namespace {

// Zero-latency link: every byte sent during a frame has arrived before the next frame starts,
// so any extra frame comes from the model's polling structure alone.
LinkConfig instant() { return LinkConfig{Duration{0}, 0}; }

Duration next_frame(Duration t, Duration period) {  // first frame start at or after t
  return period * ((t.count() + period.count() - 1) / period.count());
}

TEST(HttpRequestCooperative, SpendsOneFramePerStatusBoundary) {
  ModelBench bench(60, instant());
  HttpRequestModel nat(bench.runtime(), {});
  // Called in frame 1. Node process of frame 1: CONNECTING, poll (not connected yet).
  // Frame 2: CONNECTING, poll -> CONNECTED, return. Frame 3: CONNECTED, request() buffers.
  // Frame 4: REQUESTING, poll sends. Frame 5: REQUESTING, poll -> BODY, return.
  // Frame 6: BODY, read the one chunk, done; request_completed is emitted in frame 6's flush.
  const Measured m = bench.run(nat, ModelBench::get("/api/benchmark/ping/"));
  EXPECT_EQ(m.completion.result, RequestResult::kSuccess) << m.completion.error;
  EXPECT_EQ(m.completion.http_status, 200);
  EXPECT_EQ(m.completion.body_bytes, std::string(R"({"ok": true})").size());
  EXPECT_EQ(m.frames, 5u);
  EXPECT_EQ(m.elapsed(), 5 * bench.period());
}

TEST(HttpRequestCooperative, ReadsExactlyOneChunkPerFrame) {
  ModelBench bench(60, instant());
  HttpRequestModel nat(bench.runtime(), {});
  const Measured one = bench.run(nat, ModelBench::get(ModelBench::download(65536)));
  const Measured sixteen = bench.run(nat, ModelBench::get(ModelBench::download(16 * 65536)));
  const Measured partial = bench.run(nat, ModelBench::get(ModelBench::download(16 * 65536 + 1)));
  ASSERT_EQ(sixteen.completion.result, RequestResult::kSuccess) << sixteen.completion.error;
  EXPECT_EQ(sixteen.completion.body_bytes, 16u * 65536u);
  // The whole body is there at once, yet each further 64 KiB chunk costs one more frame.
  EXPECT_EQ(sixteen.frames - one.frames, 15u);
  EXPECT_EQ(partial.frames - sixteen.frames, 1u);
}

TEST(HttpRequestCooperative, ThroughputIsCappedAtChunkTimesFps) {
  for (std::uint32_t fps : {30u, 60u}) {
    ModelBench bench(fps, instant());
    HttpRequestModel nat(bench.runtime(), {});
    const std::uint64_t bytes = 64 * 65536;  // 4 MiB
    const Measured m = bench.run(nat, ModelBench::get(ModelBench::download(bytes)));
    ASSERT_EQ(m.completion.result, RequestResult::kSuccess);
    const double ceiling = 65536.0 * fps;  // bytes per second
    EXPECT_LE(static_cast<double>(bytes) / (to_ms(m.elapsed()) / 1000.0), ceiling) << fps;
    EXPECT_GE(m.frames, 64u);
  }
}

TEST(C3HttpCooperative, DrainsEveryAvailableChunkWithinOneFrame) {
  ModelBench bench(60, instant());
  C3HttpModel c3(bench.runtime(), {});
  // Frame 1: connect, poll, unchanged -> yield. Frame 2: poll -> CONNECTED, so without yielding
  // request() and poll (sends), unchanged -> yield. Frame 3: poll -> BODY, drain, done.
  const Measured ping = bench.run(c3, ModelBench::get("/api/benchmark/ping/"));
  EXPECT_EQ(ping.completion.result, RequestResult::kSuccess) << ping.completion.error;
  EXPECT_EQ(ping.frames, 2u);
  const Measured big = bench.run(c3, ModelBench::get(ModelBench::download(4 * 1024 * 1024)));
  EXPECT_EQ(big.completion.result, RequestResult::kSuccess) << big.completion.error;
  EXPECT_EQ(big.completion.body_bytes, 4u * 1024 * 1024);
  EXPECT_EQ(big.frames, ping.frames);  // 64 chunks, still no extra frame
}

TEST(C3HttpCooperative, WaitsOnlyForTheNetwork) {
  // 10 ms each way: the connection is up at 20 ms, seen at the next frame, which sends at once;
  // the response is there 20 ms later and is seen at the frame after that.
  const LinkConfig link{std::chrono::milliseconds(10), 0};
  for (std::uint32_t fps : {30u, 60u, 120u}) {
    ModelBench bench(fps, link);
    C3HttpModel c3(bench.runtime(), {});
    const Measured m = bench.run(c3, ModelBench::get("/api/benchmark/ping/"));
    const Duration rtt = 2 * link.one_way_delay;
    const Duration p = bench.period();
    EXPECT_EQ(m.elapsed(), next_frame(next_frame(rtt, p) + rtt, p)) << fps << " fps";
  }
}

TEST(HttpRequestCooperative, CostsMoreFramesThanC3HttpOnTheSameLink) {
  const LinkConfig link{std::chrono::milliseconds(10), 0};
  ModelBench bench(60, link);
  HttpRequestModel nat(bench.runtime(), {});
  C3HttpModel c3(bench.runtime(), {});
  const Measured n = bench.run(nat, ModelBench::get("/api/benchmark/ping/"));
  const Measured c = bench.run(c3, ModelBench::get("/api/benchmark/ping/"));
  // Connected at 20 ms, seen (-> CONNECTED) in the frame at 33 ms; request() buffers at 50 ms;
  // the frame at 67 ms sends; the response is back at 87 ms, seen (-> BODY) at 100 ms, and the
  // body is read at 117 ms.
  const Duration p = bench.period();
  EXPECT_EQ(n.elapsed(), next_frame(next_frame(20ms, p) + 2 * p + 20ms, p) + p);
  EXPECT_GT(n.frames, c.frames);
}

TEST(Threaded, ResultIsDeliveredAtTheNextFrame) {
  const LinkConfig link{std::chrono::milliseconds(10), 0};
  for (std::uint32_t fps : {30u, 60u, 120u}) {
    ModelBench bench(fps, link);
    HttpRequestOptions nat_options;
    nat_options.use_threads = true;
    nat_options.worker_sleep = Duration{1000};
    HttpRequestModel nat(bench.runtime(), nat_options);
    C3HttpOptions c3_options;
    c3_options.use_threads = true;
    c3_options.worker_sleep = Duration{1000};
    C3HttpModel c3(bench.runtime(), c3_options);
    const Duration p = bench.period();
    // The worker finishes a few microseconds after connect (1 RTT) + request (1 RTT); the main
    // thread sees it at the first frame after that, whatever the model.
    for (ClientModel* model : {static_cast<ClientModel*>(&nat), static_cast<ClientModel*>(&c3)}) {
      const Measured m = bench.run(*model, ModelBench::get("/api/benchmark/ping/"));
      EXPECT_EQ(m.completion.result, RequestResult::kSuccess) << m.completion.error;
      EXPECT_EQ(m.elapsed(), next_frame(40ms, p)) << fps << " fps";
    }
  }
}

// Where the awaiting script resumes decides in which frame the next request makes its first
// step; a split simulation relies on completion_phase() to start the next step there.
TEST(CompletionPhase, EveryModelResumesTheScriptInThePhaseItDeclares) {
  const LinkConfig link{std::chrono::milliseconds(10), 0};
  ModelBench bench(60, link);
  Session session(bench.scheduler);
  struct Case {
    const char* name;
    std::unique_ptr<ClientModel> model;
    FramePhase expected;  // from the engine's rules (frame_loop.hpp), not from the model
  };
  std::vector<Case> cases;
  for (bool threaded : {false, true}) {
    HttpRequestOptions nat;
    nat.use_threads = threaded;
    nat.worker_sleep = Duration{1000};
    // request_completed: a deferred call, from _update_connection in node process (flushed at
    // the frame's end) or from the worker between frames (flushed right after process_frame).
    cases.push_back({threaded ? "nat_thr" : "nat_coop",
                     std::make_unique<HttpRequestModel>(bench.runtime(), nat),
                     threaded ? FramePhase::kFirstFlush : FramePhase::kLastFlush});
    for (Session* pool : {static_cast<Session*>(nullptr), &session}) {
      C3HttpOptions c3;
      c3.use_threads = threaded;
      c3.worker_sleep = Duration{1000};
      c3.session = pool;
      // C3Http's caller awaits process_frame, cooperative or threaded (is_alive once per frame).
      cases.push_back(
          {"c3", std::make_unique<C3HttpModel>(bench.runtime(), c3), FramePhase::kProcessFrame});
    }
  }
  for (auto& c : cases) {
    for (const std::uint64_t bytes : {0ull, 300000ull}) {
      const auto path = bytes ? ModelBench::download(bytes) : std::string("/api/benchmark/ping/");
      const Measured m = bench.run(*c.model, ModelBench::get(path));
      ASSERT_EQ(m.completion.result, RequestResult::kSuccess)
          << c.name << ": " << m.completion.error;
      EXPECT_EQ(m.phase, c.expected) << c.name << " " << bytes;
      EXPECT_EQ(c.model->completion_phase(), c.expected) << c.name;
    }
  }
}

TEST(FrameLoopAt, RunsInTheGivenFrameAndPhaseAndRefusesThePast) {
  VirtualScheduler scheduler;
  FrameLoop frames(scheduler, FrameLoopConfig{60, Duration{0}});
  std::vector<std::pair<std::uint64_t, FramePhase>> seen;
  const auto note = [&] { seen.emplace_back(frames.frames(), frames.phase()); };
  frames.at(2, FramePhase::kLastFlush, note);
  frames.at(2, FramePhase::kProcessFrame, note);
  frames.at(3, FramePhase::kNodeProcess, [&] {
    note();
    // The present moment is refused; a later phase of the same frame is not.
    EXPECT_THROW(frames.at(3, FramePhase::kNodeProcess, note), std::logic_error);
    EXPECT_THROW(frames.at(3, FramePhase::kFirstFlush, note), std::logic_error);
    frames.at(3, FramePhase::kLastFlush, note);
    // A deferred call made at the start of a flush runs in that flush.
    frames.at(4, FramePhase::kFirstFlush, [&] { frames.call_deferred(note); });
  });
  frames.start();
  scheduler.run_until([&] { return seen.size() >= 5; }, scheduler.now() + std::chrono::seconds(1));
  const std::vector<std::pair<std::uint64_t, FramePhase>> expected = {
      {2, FramePhase::kProcessFrame},
      {2, FramePhase::kLastFlush},
      {3, FramePhase::kNodeProcess},
      {3, FramePhase::kLastFlush},
      {4, FramePhase::kFirstFlush}};
  EXPECT_EQ(seen, expected);
  EXPECT_THROW(frames.at(1, FramePhase::kLastFlush, note), std::logic_error);
  // Between frames, the last frame begun is over.
  EXPECT_FALSE(frames.ahead(frames.frames(), FramePhase::kFirstFlush));
  EXPECT_TRUE(frames.ahead(frames.frames() + 1, FramePhase::kProcessFrame));
}

TEST(EngineProfiles, Godot3SendsOnRequestAndSavesAFrame) {
  ModelBench bench(60, instant());
  HttpRequestOptions g3;
  g3.profile = EngineProfile::kGodot3;
  HttpRequestModel nat4(bench.runtime(), {});
  HttpRequestModel nat3(bench.runtime(), g3);
  const Measured m4 = bench.run(nat4, ModelBench::get("/api/benchmark/ping/"));
  const Measured m3 = bench.run(nat3, ModelBench::get("/api/benchmark/ping/"));
  EXPECT_EQ(m3.completion.result, RequestResult::kSuccess);
  // 3.2's request() writes at once, so the REQUESTING frame that only sends disappears.
  EXPECT_EQ(m4.frames - m3.frames, 1u);
}

TEST(EngineProfiles, Godot3SmallDefaultChunksMeanMoreFrames) {
  ModelBench bench(60, instant());
  HttpRequestOptions g3;
  g3.profile = EngineProfile::kGodot3;
  g3.download_chunk_size = 4096;  // 3.2's default download_chunk_size
  HttpRequestModel nat3(bench.runtime(), g3);
  const Measured small = bench.run(nat3, ModelBench::get(ModelBench::download(4096)));
  const Measured big = bench.run(nat3, ModelBench::get(ModelBench::download(65536)));
  EXPECT_EQ(big.frames - small.frames, 15u);  // 16 chunks of 4 KiB instead of 1
}

TEST(Resolution, HostNamesGoThroughTheResolver) {
  ModelBench bench(60, instant());
  C3HttpModel c3(bench.runtime(), {});
  const Measured by_ip = bench.run(c3, ModelBench::get("/api/benchmark/ping/"));
  const Measured by_name = bench.run(c3, ModelBench::get("/api/benchmark/ping/", "bench.test"));
  EXPECT_EQ(by_name.completion.result, RequestResult::kSuccess) << by_name.completion.error;
  EXPECT_EQ(by_name.frames, by_ip.frames + 1);  // the 5 ms lookup is one more wait
  const Measured unknown = bench.run(c3, ModelBench::get("/api/benchmark/ping/", "nowhere.test"));
  EXPECT_EQ(unknown.completion.result, RequestResult::kCantResolve);
}

}  // namespace
}  // namespace tb::testing
