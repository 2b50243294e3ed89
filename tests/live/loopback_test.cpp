// Every client model over real sockets against the project's own server on 127.0.0.1.
#include <gtest/gtest.h>

#include <map>

#include "support/variants.hpp"
#include "twinbench/live/live_backend.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb {
namespace {

using namespace std::chrono_literals;
using testing::kVariants;
using testing::scenario_for;

TEST(LiveLoopback, EveryVariantDownloadsEverySizeAndSessionsReuseConnections) {
  for (bool to_file : {false, true}) {
    live::LiveServer server(live::ServerOptions{});
    server.start();
    live::LiveBackend live;
    runner::RunOptions options;
    options.base_url = server.base_url();
    options.request_timeout = 30s;
    const auto s = scenario_for({120}, {0, 10240, 1048576}, kVariants, to_file);
    const auto results = runner::run_scenario(s, live.backend(), options);

    ASSERT_EQ(results.samples_size(), 3 * 4 * 6);
    std::map<std::string, int> reused;
    for (const auto& sample : results.samples()) {
      EXPECT_EQ(sample.result(), "success")
          << sample.variant() << " " << sample.body_bytes() << ": " << sample.error();
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

}  // namespace
}  // namespace tb
