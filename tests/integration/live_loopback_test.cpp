// Every client model over real sockets against the project's own server on 127.0.0.1, and the
// live frame counts against the virtual-time prediction of the same model.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "clientcore/model_fixture.hpp"
#include "live_backend.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/load.hpp"

namespace tb {
namespace {

using namespace std::chrono_literals;

struct VariantCase {
  std::string name;
  twinbench::ClientKind client;
  bool threaded;
  bool session;
};

const std::vector<VariantCase> kVariants = {
    {"c3_coop", twinbench::C3HTTP, false, false},  {"c3_thr", twinbench::C3HTTP, true, false},
    {"c3s_coop", twinbench::C3HTTP, false, true},  {"c3s_thr", twinbench::C3HTTP, true, true},
    {"nat_coop", twinbench::HTTP_REQUEST, false, false}, {"nat_thr", twinbench::HTTP_REQUEST, true, false},
};

twinbench::Scenario scenario_for(std::vector<std::uint32_t> caps, std::vector<std::uint64_t> sizes,
                                 std::vector<VariantCase> variants, bool to_file) {
  twinbench::Scenario s;
  s.set_name("integration");
  s.set_engine(twinbench::GODOT4);
  for (const auto& v : variants) {
    auto* out = s.add_variants();
    out->set_name(v.name);
    out->set_client(v.client);
    out->set_threaded(v.threaded);
    out->set_session(v.session);
  }
  for (auto c : caps) s.add_frame_caps(c);
  for (auto b : sizes) s.add_body_bytes(b);
  s.set_runs(3);
  s.set_warmups(1);
  s.set_download_to_file(to_file);
  // Zero bytes must hit the download endpoint here, not the ping.
  s.mutable_target()->set_ping_path("/api/benchmark/download/0/");
  scenario::apply_defaults(s);
  scenario::validate_scenario(s, "integration");
  return s;
}

TEST(LiveLoopback, EveryVariantDownloadsEverySizeAndSessionsReuseConnections) {
  for (bool to_file : {false, true}) {
    live::LiveServer server(live::ServerOptions{});
    server.start();
    app::LiveBackend live;
    runner::RunOptions options;
    options.base_url = server.base_url();
    options.request_timeout = 30s;
    const auto s = scenario_for({120}, {0, 10240, 1048576}, kVariants, to_file);
    const auto results = runner::run_scenario(s, live.backend(), options);

    ASSERT_EQ(results.samples_size(), 3 * 4 * 6);
    std::map<std::string, int> reused;
    for (const auto& sample : results.samples()) {
      EXPECT_EQ(sample.result(), "success") << sample.variant() << " " << sample.body_bytes() << ": " << sample.error();
      EXPECT_EQ(sample.bytes_received(), sample.body_bytes() ? sample.body_bytes() : 0u);
      reused[sample.variant()] += sample.reused_connection();
    }
    // One Session for the whole scenario: every request after the first reuses its connection.
    EXPECT_EQ(reused["c3s_coop"], 11);
    EXPECT_EQ(reused["c3s_thr"], 11);
    EXPECT_EQ(reused["c3_coop"] + reused["nat_coop"] + reused["nat_thr"] + reused["c3_thr"], 0);
    // The server sees it too: 4 variants x 12 requests on their own connections, plus one each.
    const auto st = server.stats();
    EXPECT_EQ(st.requests_served, 72u);
    EXPECT_EQ(st.connections_accepted, 4u * 12u + 2u);
  }
}

// What virtual time predicts for one request of `variant` on a link much faster than a frame.
std::uint64_t predicted_frames(const VariantCase& v, std::uint32_t fps, std::uint64_t bytes) {
  testing::ModelBench bench(fps, testing::LinkConfig{Duration{0}, 0});
  std::unique_ptr<ClientModel> model;
  if (v.client == twinbench::HTTP_REQUEST) model = std::make_unique<HttpRequestModel>(bench.runtime(), HttpRequestOptions{});
  else model = std::make_unique<C3HttpModel>(bench.runtime(), C3HttpOptions{});
  return bench.run(*model, testing::ModelBench::get(testing::ModelBench::download(bytes))).frames;
}

// Loopback is faster than a frame, but a connect can complete before or after the poll that
// follows it within the same frame (the kernel races the frame loop), so single samples may be a
// frame short; the median of each cell is what the model predicts.
TEST(LiveLoopback, CooperativeFrameCountsMatchTheVirtualTimeModel) {
  live::LiveServer server(live::ServerOptions{});
  server.start();
  app::LiveBackend live;
  runner::RunOptions options;
  options.base_url = server.base_url();
  options.request_timeout = 30s;
  const std::vector<VariantCase> coop = {kVariants[0], kVariants[4]};
  const auto s = scenario_for({60, 30}, {0, 10240, 1048576}, coop, false);
  const auto results = runner::run_scenario(s, live.backend(), options);
  std::map<std::tuple<std::string, std::uint32_t, std::uint64_t>, std::vector<std::uint64_t>> frames;
  for (const auto& sample : results.samples()) {
    if (sample.warmup()) continue;
    frames[{sample.variant(), sample.fps(), sample.body_bytes()}].push_back(sample.frames());
    // Whole frames: the time is the frame count times the frame period, within a frame.
    const double period_ms = 1000.0 / sample.fps();
    EXPECT_NEAR(sample.elapsed_ms(), static_cast<double>(sample.frames()) * period_ms, period_ms);
  }
  ASSERT_EQ(frames.size(), 12u);
  for (auto& [cell, counts] : frames) {
    const auto& [variant, fps, bytes] = cell;
    std::sort(counts.begin(), counts.end());
    const auto& v = variant == "c3_coop" ? coop[0] : coop[1];
    EXPECT_EQ(counts[counts.size() / 2], predicted_frames(v, fps, bytes))
        << variant << " at " << fps << " fps, " << bytes << " B";
  }
}

}  // namespace
}  // namespace tb
