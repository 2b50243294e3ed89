// What a link that changes over time costs the simulation: CPU time of a download over a delivery
// trace of a constant rate against the same download over the constant link of the trace's mean
// rate, measured in the same run, taking turns in blocks (docs/scenarios.md, "Links that change
// over time"). The trace's link is the sans-IO link model (link/) behind ns-3 devices that hand
// packets over; the constant link is ns-3's point-to-point device.
//
//   build/default/bench/trace_link_cost [blocks] [MiB]        (default 9 blocks of 8 MiB; scripts/trace-cost.sh runs 25)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "twinbench/link/trace_shapes.hpp"
#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/sim/run_simulated.hpp"

namespace {

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// A download of `bytes` by C3Http at 60 fps (it reads all that arrived each frame: not gated).
twinbench::Scenario download(std::uint64_t bytes) {
  return tb::scenario::parse_scenario(R"(
      name: "trace_cost"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [60]
      body_bytes: [)" + std::to_string(bytes) +
                                          R"(]
      runs: 1
      download_to_file: true
      network { link { client_to_server_delay_ms: 20 server_to_client_delay_ms: 20 downlink_mbps: 100 uplink_mbps: 20 } }
  )",
                                      "bench");
}

double cpu_of(const twinbench::Scenario& s) {
  const double start = process_cpu_seconds();
  const auto results = tb::sim::run_simulated(s, {}, 1);
  const double cpu = process_cpu_seconds() - start;
  if (results.samples(0).result() != "success") {
    std::fprintf(stderr, "download failed: %s\n", results.samples(0).error().c_str());
    std::exit(1);
  }
  return cpu;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::max(1, std::atoi(argv[1])) : 9;
  const std::uint64_t mib = argc > 2 ? std::max(1, std::atoi(argv[2])) : 8;
  // 100 Mbit/s for a second as a trace (8 or 9 opportunities a ms), and the equal constant link.
  tb::link::TraceShape shape;
  shape.step_mbps = {100};
  shape.duration_ms = 1000;
  const auto trace = tb::link::opportunities_for(tb::link::rate_per_ms(shape));
  auto traced = download(mib << 20);
  for (const std::uint32_t ms : trace)
    traced.mutable_network()->mutable_link()->mutable_downlink_trace()->add_opportunities_ms(ms);
  auto constant = download(mib << 20);
  constant.mutable_network()->mutable_link()->set_downlink_mbps(
      tb::scenario::trace_mean_mbps(trace));
  std::vector<double> ratios, constant_cpu, traced_cpu;
  for (int b = 0; b < blocks; ++b) {
    // Who goes first alternates, so a warm-up or a drift favours neither.
    double c = 0, t = 0;
    if (b % 2 == 0) {
      c = cpu_of(constant);
      t = cpu_of(traced);
    } else {
      t = cpu_of(traced);
      c = cpu_of(constant);
    }
    constant_cpu.push_back(c);
    traced_cpu.push_back(t);
    ratios.push_back(t / c);
    std::fprintf(stderr, "block %d/%d: constant %.3f s, trace %.3f s\n", b + 1, blocks, c, t);
  }
  std::printf("| link (%llu MiB at %.3f Mbit/s, 20 ms each way) | least CPU s | median CPU s |\n",
              static_cast<unsigned long long>(mib), tb::scenario::trace_mean_mbps(trace));
  std::printf("|---|---:|---:|\n");
  std::printf("| constant (ns-3's point-to-point device) | %.3f | %.3f |\n",
              *std::min_element(constant_cpu.begin(), constant_cpu.end()), median(constant_cpu));
  std::printf("| delivery trace of the same mean rate (link model) | %.3f | %.3f |\n",
              *std::min_element(traced_cpu.begin(), traced_cpu.end()), median(traced_cpu));
  std::printf(
      "\nCPU time of the trace over the constant link, per block: median %.3f (%.3f..%.3f) "
      "over %d blocks\n",
      median(ratios), *std::min_element(ratios.begin(), ratios.end()),
      *std::max_element(ratios.begin(), ratios.end()), blocks);
  return 0;
}
