#pragma once
// A scenario run in simulation: split into parts simulated on their own (each a SimBackend) by a
// pool of worker processes (parallel/), their samples merged back in protocol order.
#include <string>
#include <vector>

#include "results.pb.h"
#include "scenario.pb.h"
#include "twinbench/runner/run_scenario.hpp"

namespace tb::sim {

// Runs a scenario in simulation. A scenario splits into parts, each simulated on its own: one per
// frame cap when Sessions are per cap; within that, one per variant without a Session (fresh
// connections) and one for the Session variants, which waits out the others' steps frame for
// frame as they are recorded (run_simulated.cpp). The samples come back in protocol order. Each
// part has its own seed derived from `seed`, so the results do not depend on `jobs`, the number
// of simulation processes run at once.
// `capture_dir`, if set, receives each part's packet captures (part-<i>-client.pcap and
// part-<i>-server.pcap; SimNetwork::capture). A link that changes over time is never split: the
// whole run is one simulation from time 0. `whole_run`: no split per variant, the interleaved
// run in one simulation per Session scope (slower; to check the split on a scenario).
twinbench::ResultSet run_simulated(const twinbench::Scenario& scenario,
                                   const runner::RunOptions& options, unsigned jobs,
                                   const std::string& capture_dir = {}, bool whole_run = false);

struct SimulationRequest {
  twinbench::Scenario scenario;
  runner::RunOptions options;
  std::string capture_dir;  // as run_simulated's; empty: no captures
  bool whole_run = false;   // as run_simulated's
};

// Several scenarios at once: their parts share one pool of `jobs` processes, the costliest (most
// bytes to move) started first, so one long simulation overlaps the others' short ones. Each result is
// what run_simulated(request.scenario, request.options, jobs, request.capture_dir,
// request.whole_run) gives.
std::vector<twinbench::ResultSet> run_simulated_together(
    const std::vector<SimulationRequest>& requests, unsigned jobs);

}  // namespace tb::sim
