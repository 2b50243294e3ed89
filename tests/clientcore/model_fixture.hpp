#pragma once
// A whole client stack on virtual time: frame loop, simulated workers, resolver and an in-memory
// network whose peer is the real server core. One request at a time, measured like the
// benchmark script measures it: from the request call to the moment the awaiting script resumes.
#include <gtest/gtest.h>

#include <memory>
#include <optional>

#include "support/memory_network.hpp"
#include "twinbench/clientcore/c3http_model.hpp"
#include "twinbench/clientcore/delay_resolver.hpp"
#include "twinbench/clientcore/frame_loop.hpp"
#include "twinbench/clientcore/http_request_model.hpp"
#include "twinbench/clientcore/scheduled_threads.hpp"
#include "twinbench/clientcore/session.hpp"
#include "twinbench/clientcore/virtual_scheduler.hpp"

namespace tb::testing {

using namespace std::chrono_literals;

struct Measured {
  Completion completion;
  Time started{0};
  Time finished{0};
  std::uint64_t frames = 0;  // frames begun between the call and the resumption
  FramePhase phase = FramePhase::kBetweenFrames;  // where the script resumed
  Duration elapsed() const { return finished - started; }
};

class CountingSinks : public BodySinkFactory {
 public:
  std::unique_ptr<BodySink> open(const std::string&) override {
    struct Sink : BodySink {
      CountingSinks* owner;
      explicit Sink(CountingSinks* o) : owner(o) {}
      bool write(std::span<const std::byte> d) override {
        owner->bytes += d.size();
        return true;
      }
      bool finish() override { return true; }
    };
    return std::make_unique<Sink>(this);
  }
  std::uint64_t bytes = 0;
};

class ModelBench {
 public:
  explicit ModelBench(std::uint32_t fps, LinkConfig link = {},
                      std::function<std::unique_ptr<Peer>()> peers = nullptr)
      : requests(std::make_shared<std::uint64_t>(0)),
        frames(scheduler, FrameLoopConfig{fps, fps ? Duration{0} : Duration{1ms}}),
        threads(scheduler, Duration{1000}),
        resolver(scheduler, 5ms, {{"bench.test", "10.0.0.1"}}),
        network(scheduler, link, peers ? std::move(peers) : server_peers(requests)) {
    frames.start();
  }

  ModelRuntime runtime() { return ModelRuntime{frames, threads, network, resolver, &sinks}; }

  Duration period() const {
    return frames.config().fps_cap ? Duration{1'000'000'000LL / frames.config().fps_cap} : 1ms;
  }

  // Starts `spec` from a script resumed at the next process_frame, like the benchmark coroutine.
  Measured run(ClientModel& model, RequestSpec spec) {
    std::optional<Measured> result;
    Measured m;
    frames.await_process_frame([&] {
      m.started = scheduler.now();
      const std::uint64_t first = frames.frames();
      model.request(spec, [&, first](const Completion& c) {
        m.completion = c;
        m.finished = scheduler.now();
        m.frames = frames.frames() - first;
        m.phase = frames.phase();
        result = m;
      });
    });
    const bool done =
        scheduler.run_until([&] { return result.has_value(); }, scheduler.now() + 120s);
    EXPECT_TRUE(done) << "request did not complete within 120 simulated seconds";
    return result.value_or(Measured{});
  }

  static RequestSpec get(std::string path, std::string host = "127.0.0.1") {
    RequestSpec spec;
    spec.url = "http://" + host + ":8927" + path;
    return spec;
  }
  static std::string download(std::uint64_t bytes) {
    return "/api/benchmark/download/" + std::to_string(bytes) + "/";
  }

  std::shared_ptr<std::uint64_t> requests;
  VirtualScheduler scheduler;
  FrameLoop frames;
  ScheduledThreads threads;
  DelayResolver resolver;
  MemoryNetwork network;
  CountingSinks sinks;
};

}  // namespace tb::testing
