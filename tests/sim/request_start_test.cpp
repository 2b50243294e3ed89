// scenario.request_start: a script that awaits the next process_frame before each request (as many
// game scripts do) against benchmark.gd, which starts the next request where the previous one's
// completion resumed it. Observed where the difference is: when each request's connection is made.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/sim/sim_backend.hpp"

namespace tb {
namespace {

// Records when each transport (one per fresh connection: one per HTTPRequest request) is made.
class RecordingTransports : public TransportFactory {
 public:
  RecordingTransports(TransportFactory& inner, Scheduler& clock) : inner_(inner), clock_(clock) {}
  std::unique_ptr<Transport> create() override {
    created_ms.push_back(std::chrono::duration<double, std::milli>(clock_.now()).count());
    return inner_.create();
  }
  std::vector<double> created_ms;

 private:
  TransportFactory& inner_;
  Scheduler& clock_;
};

// The idle time the script left between each request's completion and the next request.
std::vector<double> gaps_between_requests(twinbench::RequestStart start) {
  auto s = scenario::parse_scenario(R"(
      name: "start"
      variants { name: "nat_coop" client: HTTP_REQUEST }
      frame_caps: [60]
      body_bytes: [0]
      runs: 4
      warmups: 0
      frame_loop { frame_work_ms: 1.0 }
      network {
        link { client_to_server_delay_ms: 1 server_to_client_delay_ms: 1 downlink_mbps: 1000 uplink_mbps: 1000 }
      }
  )",
                                    "start");
  s.set_request_start(start);
  sim::SimBackend sim(s, 1);
  runner::Backend& b = sim.backend();
  RecordingTransports transports(b.transports, b.scheduler);
  runner::Backend recorded{b.scheduler, b.threads,        transports, b.resolver,         b.sinks,
                           b.run_until, b.check_download, b.name,     b.runs_many_clients};
  runner::RunOptions options;
  options.base_url = sim.base_url();
  const auto results = runner::run_scenario(s, recorded, options);
  EXPECT_EQ(static_cast<std::size_t>(results.samples_size()), transports.created_ms.size());
  std::vector<double> gaps;
  for (int i = 0; i + 1 < results.samples_size(); ++i) {
    EXPECT_EQ(results.samples(i).result(), "success") << results.samples(i).error();
    const auto at = static_cast<std::size_t>(i);
    gaps.push_back(transports.created_ms[at + 1] - transports.created_ms[at] -
                   results.samples(i).elapsed_ms());
  }
  return gaps;
}

TEST(SimRequestStart, AfterCompletionStartsTheNextRequestAtOnceAndNextProcessFrameAFrameLater) {
  // benchmark.gd: HTTPRequest's completion resumes the script in the frame's last flush, and the
  // next request (and its connection) starts right there.
  for (const double gap : gaps_between_requests(twinbench::AFTER_COMPLETION))
    EXPECT_NEAR(gap, 0, 1e-6);
  // Awaiting process_frame first: the request starts at the next frame's start, up to a frame
  // later (here a whole frame: the completion resumed the script at the end of a frame's work).
  for (const double gap : gaps_between_requests(twinbench::NEXT_PROCESS_FRAME)) {
    EXPECT_GT(gap, 0);
    EXPECT_LE(gap, 1000.0 / 60 + 1e-6);
  }
}

}  // namespace
}  // namespace tb
