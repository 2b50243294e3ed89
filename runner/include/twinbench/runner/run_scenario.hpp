#pragma once
// Runs a scenario's protocol on any backend: cells (frame cap x body size), warmup and measured
// rounds, every variant once per round in interleave order, Sessions per the scenario's scope.
// The benchmark script is modelled too: it reads the clock just before each request call and
// just after the awaiting coroutine resumes, then starts the next request right there.
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "results.pb.h"
#include "twinbench/clientcore/body_sink.hpp"
#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/scheduler.hpp"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/clientcore/threads.hpp"
#include "twinbench/clientcore/transport.hpp"

namespace tb::runner {

// The seams of one backend (live or simulated), plus how to drive its scheduler.
struct Backend {
  Scheduler& scheduler;
  Threads& threads;
  TransportFactory& transports;
  Resolver& resolver;
  BodySinkFactory& sinks;
  // Runs the scheduler until `done()` holds or `timeout` of backend time passes; false on timeout.
  std::function<bool(const std::function<bool()>& done, Duration timeout)> run_until;
  // Checks a download streamed to the sink `name` (its size) and removes it; an error text or "".
  std::function<std::string(const std::string& name, std::uint64_t expected_bytes)> check_download;
  std::string name;  // "live" or "sim"
  // Whether several game clients (scenario.clients > 1) can run at once on it: a simulation
  // holds them all on one virtual clock; a live run has one frame loop (`twinbench load` is the
  // live load).
  bool runs_many_clients = false;
};

// One step of the protocol: a variant's request in a round of a cell.
struct StepKey {
  std::string variant;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  std::uint32_t round = 0;
  auto operator<=>(const StepKey&) const = default;
};

// How long a step took where it ran, in frames: it ended in the frame `frames` after the one it
// started in (or timed out there, and the script resumed one frame later).
struct StepSpan {
  std::uint64_t frames = 0;
  bool timed_out = false;
};

// A run of only some of the scenario's variants (one part of a split simulation): the steps
// of `variants` are simulated elsewhere and not here. The script goes on in the frame phase where
// such a step's script would have resumed (its model's completion_phase): with `span_of_step`, in
// the frame it ended in there, so the variants run here see the same idle gaps as in the whole
// interleaved run; without, in the next frame (for variants whose outcome does not depend on
// when they start). `span_of_step` is asked for each step in protocol order, when the script
// reaches it; it may wait until the part running that step has recorded it.
struct StepsElsewhere {
  std::set<std::string> variants;
  std::function<StepSpan(const StepKey&)> span_of_step;
};

struct RunOptions {
  std::string base_url;  // the server; overrides the scenario's target.base_url
  Duration request_timeout = std::chrono::seconds(120);
  std::uint64_t seed = 0;
  bool server_nodelay = false;
  // For https URLs. Each model gets its own context, renewed with the Sessions, so saved TLS
  // sessions (resumption) are per variant and per session scope.
  std::optional<TlsClientConfig> tls;
  // Called after every sample (for progress on stderr).
  std::function<void(const twinbench::Sample&, std::size_t done, std::size_t total)> on_sample;
  std::optional<StepsElsewhere> elsewhere;  // unset: every variant runs here
  // Asked whenever the backend checks whether the run is done (every event on a live backend,
  // so at least once a frame); when it answers true the run is abandoned with RunStopped. Set by
  // the command line to "a SIGINT or SIGTERM came" for the real-time backends.
  std::function<bool()> stop_requested;
  bool stopping() const { return stop_requested && stop_requested(); }
};

// A run abandoned because RunOptions::stop_requested said so; nothing of it is kept.
class RunStopped : public std::runtime_error {
 public:
  RunStopped() : std::runtime_error("the run was asked to stop") {}
};

// The step a sample records, and how long it took, in the terms StepsElsewhere uses.
StepKey step_of(const twinbench::Sample& sample);
StepSpan span_of(const twinbench::Sample& sample);
// The scenario's steps in protocol order: the order one whole run takes them in.
std::vector<StepKey> protocol_steps(const twinbench::Scenario& scenario);

// The scenario must be validated (tb::scenario::load_scenario does). Throws std::runtime_error
// when the backend stops making progress.
twinbench::ResultSet run_scenario(const twinbench::Scenario& scenario, Backend& backend,
                                  const RunOptions& options);

}  // namespace tb::runner
