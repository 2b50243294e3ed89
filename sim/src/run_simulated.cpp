#include "twinbench/sim/run_simulated.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "twinbench/parallel/fork_pool.hpp"
#include "twinbench/parallel/stop_signals.hpp"
#include "twinbench/sim/task_channels.hpp"
#include "twinbench/scenario/network.hpp"
#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/seeds.hpp"
#include "twinbench/runner/tls_setup.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/sim/sim_backend.hpp"

namespace tb::sim {

using scenario::splitmix64;

namespace {

// A part of a scenario run, simulated on its own: the scenario (with only its frame cap when
// Sessions are per cap), the variants simulated in other parts, and the parts whose steps this
// one waits out (indices among the scenario's parts).
struct Part {
  twinbench::Scenario scenario;
  std::optional<runner::StepsElsewhere> elsewhere;
  std::vector<std::size_t> waits_for;
};

// A scenario's parts. Nothing carries over between frame caps when Sessions are per cap: one
// part per cap. Within one, a variant without a Session opens a fresh connection for every
// request, so what a request takes does not depend on when it starts: each such variant gets a
// part of its own, which passes over the other variants' steps one frame each (ending in the
// phase where their scripts would resume: runner::StepsElsewhere). The Session variants keep their
// connections, whose idle gaps (BBR's min-RTT expiry, keep-alive timeouts) are the other
// variants' steps: they run together in one more part that waits those steps out, frame for
// frame, as the fresh-connection parts record them (SimulationPool). `whole_run`: only the split
// per frame cap, which is exact.
std::vector<Part> split_into_parts(const twinbench::Scenario& s, bool whole_run) {
  // A link that changes over time is in another state at each moment of the run: only the whole
  // run, in one simulation from time 0 as on the emulated path, meets it as the run does.
  if (scenario::varies_over_time(s.network().link())) return {Part{s, std::nullopt, {}}};
  std::vector<twinbench::Scenario> per_cap;
  if (s.session_scope() == twinbench::PER_FRAME_CAP && s.frame_caps_size() > 1) {
    for (std::uint32_t cap : s.frame_caps()) {
      twinbench::Scenario part = s;
      part.clear_frame_caps();
      part.add_frame_caps(cap);
      per_cap.push_back(std::move(part));
    }
  } else {
    per_cap.push_back(s);
  }
  std::vector<std::string> fresh;  // in the scenario's order, which numbers the parts
  std::set<std::string> kept;
  for (const auto& v : s.variants()) {
    if (v.session()) {
      kept.insert(v.name());
    } else {
      fresh.push_back(v.name());
    }
  }
  std::vector<Part> parts;
  for (auto& scenario : per_cap) {
    // Several clients share the path at once: their variants cannot be simulated apart.
    const bool clients_share_the_path = s.has_clients() && s.clients() > 1;
    if (whole_run || clients_share_the_path || fresh.empty() || s.variants_size() < 2) {
      parts.push_back(Part{std::move(scenario), std::nullopt, {}});
      continue;
    }
    std::vector<std::size_t> fresh_parts;
    for (const auto& name : fresh) {
      runner::StepsElsewhere others{kept, {}};
      for (const auto& other : fresh) {
        if (other != name) others.variants.insert(other);
      }
      fresh_parts.push_back(parts.size());
      parts.push_back(Part{scenario, std::move(others), {}});
    }
    if (!kept.empty()) {
      // Its steps' spans come from the fresh-connection parts when it runs (SimulationPool).
      runner::StepsElsewhere others{{fresh.begin(), fresh.end()}, {}};
      parts.push_back(Part{std::move(scenario), std::move(others), std::move(fresh_parts)});
    }
  }
  return parts;
}

// A part ready to simulate: its scenario, its options (with the variants simulated elsewhere) and
// seed, where its captures go, and the simulations whose steps it waits out (indices among all
// the simulations of a run_simulated_together).
struct Simulation {
  twinbench::Scenario scenario;
  runner::RunOptions options;
  std::uint64_t seed = 0;
  std::string capture_prefix;
  std::vector<std::size_t> waits_for;
};

twinbench::ResultSet simulate(const Simulation& simulation) {
  SimBackend sim(simulation.scenario, simulation.seed);
  if (!simulation.capture_prefix.empty()) sim.capture(simulation.capture_prefix);
  runner::RunOptions options = simulation.options;
  options.base_url = sim.base_url();
  options.tls = sim.tls_client();
  return runner::run_scenario(simulation.scenario, sim.backend(), options);
}

// A scenario's simulations, each with the seed derived from the run's seed and its part's index,
// so that results do not depend on how they are scheduled. `first`: the index of the first.
std::vector<Simulation> simulations_of(const SimulationRequest& request,
                                       const std::string& capture_dir, std::size_t first) {
  const auto& options = request.options;
  std::vector<Simulation> simulations;
  for (auto& part : split_into_parts(request.scenario, request.whole_run)) {
    const std::size_t i = simulations.size();
    Simulation simulation{std::move(part.scenario),
                          options,
                          splitmix64(options.seed * 1000003u + i),
                          capture_dir.empty() ? "" : capture_dir + "/part-" + std::to_string(i),
                          {}};
    simulation.options.elsewhere = std::move(part.elsewhere);
    for (const auto w : part.waits_for) simulation.waits_for.push_back(first + w);
    simulations.push_back(std::move(simulation));
  }
  return simulations;
}

// The samples of a scenario's parts in its protocol order, as one run would have recorded them.
twinbench::ResultSet merge_parts(const twinbench::Scenario& scenario,
                                 const runner::RunOptions& options,
                                 const std::vector<twinbench::ResultSet>& parts) {
  twinbench::ResultSet merged;
  merged.mutable_scenario()->CopyFrom(scenario);
  merged.mutable_run()->CopyFrom(parts.front().run());
  merged.mutable_run()->set_seed(options.seed);
  merged.mutable_run()->set_server_nodelay(scenario.network().server_tcp().nodelay());
  std::map<runner::StepKey, std::size_t> position;
  for (const auto& step : runner::protocol_steps(scenario)) position.emplace(step, position.size());
  std::vector<std::pair<std::size_t, const twinbench::Sample*>> samples;
  for (const auto& part : parts) {
    for (const auto& sample : part.samples()) {
      const auto it = position.find(runner::step_of(sample));
      if (it == position.end())
        throw std::logic_error("a part's sample is not a step of its scenario");
      samples.emplace_back(it->second, &sample);
    }
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [position, sample] : samples) *merged.add_samples() = *sample;
  return merged;
}

// What a simulation costs, roughly: the bytes it moves, with each request counted as 64 KiB.
double simulated_bytes(const Simulation& simulation) {
  const auto& s = simulation.scenario;
  double per_round = 0;
  for (const auto bytes : s.body_bytes()) per_round += static_cast<double>(bytes) + 65536.0;
  const auto elsewhere =
      simulation.options.elsewhere ? simulation.options.elsewhere->variants.size() : 0;
  const double clients = s.has_clients() ? s.clients() : 1;
  return per_round * static_cast<double>(s.variants_size() - elsewhere) * s.frame_caps_size() *
         (s.runs() + s.warmups()) * clients;
}

// What a simulation holds up: its own cost and the costliest chain of simulations waiting for it.
double held_up(const std::vector<Simulation>& simulations, std::size_t i) {
  double waiting = 0;
  for (std::size_t j = 0; j < simulations.size(); ++j) {
    const auto& w = simulations[j].waits_for;
    if (std::find(w.begin(), w.end(), i) != w.end())
      waiting = std::max(waiting, held_up(simulations, j));
  }
  return simulated_bytes(simulations[i]) + waiting;
}

using SampleReport = std::function<void(const twinbench::Sample&)>;
using SpanOfStep = std::function<runner::StepSpan(const runner::StepKey&)>;

// Runs every simulation and returns their results by index: in `jobs` worker processes when there
// are several (each child leaves its ResultSet in a file), else here. Here, a simulation that
// waits out others' steps runs after them, given their spans. In worker processes it starts
// together with them, beyond `jobs` (it waits for their spans most of the time) and is fed their
// spans as they are recorded (SpanFeed). The simulation holding up the most work starts first
// (longest-processing-time order): a long simulation then overlaps the short ones. `on_sample`,
// if given, gets every sample as it is recorded, from whichever simulation.
class SimulationPool {
 public:
  SimulationPool(const std::vector<Simulation>& simulations,
                 const SampleChannel::Receiver& on_sample)
      : simulations_(simulations),
        on_sample_(on_sample),
        results_(simulations.size()),
        done_(simulations.size(), false) {
    std::vector<double> weight(simulations.size());
    for (std::size_t i = 0; i < simulations.size(); ++i) {
      order_.push_back(i);
      weight[i] = held_up(simulations, i);
    }
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
  }

  std::vector<twinbench::ResultSet> run(unsigned jobs) {
    if (jobs <= 1 || simulations_.size() <= 1) {
      run_here();
    } else {
      run_in_workers(jobs);
    }
    if (!std::all_of(done_.begin(), done_.end(), [](bool d) { return d; }))
      throw std::logic_error("simulations wait for each other");
    return std::move(results_);
  }

 private:
  bool waits(std::size_t waiting, std::size_t i) const {
    const auto& w = simulations_[waiting].waits_for;
    return std::find(w.begin(), w.end(), i) != w.end();
  }
  bool all_done(const std::vector<std::size_t>& indices) const {
    return std::all_of(indices.begin(), indices.end(), [&](std::size_t j) { return done_[j]; });
  }
  void finish(std::size_t i, twinbench::ResultSet r) {
    results_[i] = std::move(r);
    done_[i] = true;
  }

  // Simulation i as it runs: reporting its samples to `report`, and with the spans of the steps
  // it waits out from `span_of_step`, if it waits any out.
  twinbench::ResultSet simulate_with(std::size_t i, const SampleReport& report,
                                     SpanOfStep span_of_step) const {
    Simulation simulation = simulations_[i];
    simulation.options.on_sample = nullptr;
    if (report) {
      simulation.options.on_sample = [report](const twinbench::Sample& s, std::size_t,
                                              std::size_t) { report(s); };
    }
    if (!simulation.waits_for.empty())
      simulation.options.elsewhere->span_of_step = std::move(span_of_step);
    return simulate(simulation);
  }

  // In order, the first simulation not done whose simulations to wait for are done, until none
  // is left; the spans it waits out are those its predecessors recorded.
  void run_here() {
    for (auto k = order_.begin(); k != order_.end();) {
      const std::size_t i = *k;
      if (done_[i] || !all_done(simulations_[i].waits_for)) {
        ++k;
        continue;
      }
      parallel::throw_if_stopped();  // here a signal waits for the simulation running to end
      SampleReport report;
      if (on_sample_) report = [this, i](const twinbench::Sample& s) { on_sample_(i, s); };
      auto spans = std::make_shared<std::map<runner::StepKey, runner::StepSpan>>();
      for (const auto j : simulations_[i].waits_for) {
        for (const auto& sample : results_[j].samples())
          spans->emplace(runner::step_of(sample), runner::span_of(sample));
      }
      const auto span_of_step = [spans](const runner::StepKey& step) {
        const auto it = spans->find(step);
        if (it == spans->end()) {
          throw std::logic_error("no span for " + step.variant + "'s step in round " +
                                 std::to_string(step.round));
        }
        return it->second;
      };
      finish(i, simulate_with(i, report, span_of_step));
      k = order_.begin();  // a simulation may have become ready
    }
  }

  // Each simulation that waits out others' steps gets a feed; it starts with those it waits for
  // (all of them: each round it needs a span from each, so it keeps pace only while they all
  // run). Returns, by position in `order_`, the positions that start together.
  std::vector<std::vector<std::size_t>> make_feeds() {
    std::vector<std::size_t> position(simulations_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) position[order_[k]] = k;
    std::vector<std::vector<std::size_t>> group(simulations_.size());
    for (std::size_t i = 0; i < simulations_.size(); ++i) {
      if (simulations_[i].waits_for.empty()) continue;
      feeds_.emplace(i, std::make_unique<SpanFeed>());
      std::vector<std::size_t> members{position[i]};
      for (const auto j : simulations_[i].waits_for) members.push_back(position[j]);
      for (const auto member : members) group[member] = members;
    }
    return group;
  }

  // In the child of simulation i: runs it, sending its samples to the parent when anyone listens,
  // reading the spans it waits out from its feed.
  twinbench::ResultSet simulate_in_child(std::size_t i) {
    for (auto& [waiting, feed] : feeds_) feed->keep_in_child(waiting == i);
    const bool waited_for =
        std::any_of(feeds_.begin(), feeds_.end(), [&](const auto& f) { return waits(f.first, i); });
    SampleReport report;
    if (on_sample_ || waited_for) {
      report = [this, i](const twinbench::Sample& s) {
        channel_.send(static_cast<std::uint32_t>(i), s);
      };
    }
    SpanOfStep span_of_step;
    if (const auto feed = feeds_.find(i); feed != feeds_.end()) {
      span_of_step = [f = feed->second.get()](const runner::StepKey& step) {
        return f->span_of_step(step);
      };
    }
    try {
      return simulate_with(i, report, span_of_step);
    } catch (const std::exception& e) {
      throw std::runtime_error("simulation " + std::to_string(i) + ": " + e.what());
    }
  }

  // In the parent: a sample from simulation `from`, for the progress and the feeds waiting for it.
  void receive(std::size_t from, const twinbench::Sample& sample) {
    if (on_sample_) on_sample_(from, sample);
    for (auto& [waiting, feed] : feeds_)
      if (waits(waiting, from)) feed->add(sample);
  }

  // In the parent, once simulation i's child has ended: its results read back, and the feeds of
  // those waiting for it finished when all they wait for is done (all of them on a failure).
  void collect(std::size_t i, bool ok, const std::filesystem::path& file) {
    channel_.receive(0, [this](std::size_t from, const twinbench::Sample& s) { receive(from, s); });
    if (ok) {
      twinbench::ResultSet r;
      std::ifstream in(file, std::ios::binary);
      if (r.ParseFromIstream(&in)) {
        finish(i, std::move(r));
      } else if (failure_.empty()) {
        failure_ = "cannot read the results of simulation " + std::to_string(i);
      }
    }
    for (auto& [waiting, feed] : feeds_) {
      if (!ok || !failure_.empty() ||
          (waits(waiting, i) && all_done(simulations_[waiting].waits_for)))
        feed->finish();  // nothing more comes: the waiting stop
    }
  }

  void run_in_workers(unsigned jobs) {
    // Test credentials are made once per process and cached (RSA key generation was ~90 % of a
    // small simulation's time): made here, the children inherit them.
    for (const auto& simulation : simulations_)
      if (runner::uses_tls(simulation.scenario))
        servercore::make_credentials(
            runner::cert_profile(simulation.scenario, simulated_server_names(simulation.scenario)));
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("twinbench-simulations-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // Removed however this ends (run_forked throws if fork or waitpid fails).
    struct RemoveOnExit {
      fs::path dir;
      ~RemoveOnExit() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
      }
    } remove_dir{dir};
    auto file_of = [&](std::size_t i) { return dir / ("simulation-" + std::to_string(i) + ".pb"); };
    const auto group = make_feeds();
    const auto receive_all = [this](std::size_t from, const twinbench::Sample& s) {
      receive(from, s);
    };
    const auto failed = parallel::run_forked(
        order_.size(), jobs,
        [&](std::size_t k) {
          const auto r = simulate_in_child(order_[k]);
          std::ofstream out(file_of(order_[k]), std::ios::binary);
          return r.SerializeToOstream(&out) && out.flush() ? 0 : 3;
        },
        [&](std::size_t k, bool ok) { collect(order_[k], ok, file_of(order_[k])); },
        [&](std::size_t k) { return group[k]; },
        [&] {
          channel_.receive(20, receive_all);
          for (auto& [waiting, feed] : feeds_) feed->flush();
        });
    channel_.receive(0, receive_all);
    if (failed)
      throw std::runtime_error("simulation " + std::to_string(order_[*failed]) + " failed");
    if (!failure_.empty()) throw std::runtime_error(failure_);
  }

  const std::vector<Simulation>& simulations_;
  const SampleChannel::Receiver& on_sample_;
  std::vector<std::size_t> order_;
  std::vector<twinbench::ResultSet> results_;
  std::vector<bool> done_;
  // Worker processes only.
  SampleChannel channel_;
  std::map<std::size_t, std::unique_ptr<SpanFeed>> feeds_;
  std::string failure_;
};

}  // namespace

twinbench::ResultSet run_simulated(const twinbench::Scenario& scenario,
                                   const runner::RunOptions& options, unsigned jobs,
                                   const std::string& capture_dir, bool whole_run) {
  return run_simulated_together({SimulationRequest{scenario, options, capture_dir, whole_run}},
                                jobs)
      .front();
}

std::vector<twinbench::ResultSet> run_simulated_together(
    const std::vector<SimulationRequest>& requests, unsigned jobs) {
  namespace fs = std::filesystem;
  // Captures are written as packets pass, into a hidden directory; they take their names in
  // capture_dir only once every simulation has finished (and closed its files), so a failed or
  // interrupted run leaves no half-written capture under a final name.
  std::vector<fs::path> partials;
  for (const auto& request : requests) {
    partials.push_back(request.capture_dir.empty()
                           ? fs::path()
                           : fs::path(request.capture_dir) /
                                 (".partial-" + std::to_string(::getpid())));
  }
  const auto remove_partials = [&] {
    for (const auto& partial : partials) {
      if (!partial.empty()) fs::remove_all(partial);
    }
  };

  std::vector<Simulation> simulations;
  std::vector<std::size_t> owner;  // the request each simulation belongs to
  for (std::size_t r = 0; r < requests.size(); ++r) {
    for (auto& simulation : simulations_of(requests[r], partials[r].string(), simulations.size())) {
      simulations.push_back(std::move(simulation));
      owner.push_back(r);
    }
    if (!partials[r].empty()) fs::create_directories(partials[r]);
  }
  // Progress: each request's samples counted against its whole protocol, whichever part sent them.
  std::vector<std::size_t> reported(requests.size(), 0);
  std::vector<std::size_t> total(requests.size(), 0);
  SampleChannel::Receiver on_sample;
  if (std::any_of(requests.begin(), requests.end(),
                  [](const auto& r) { return r.options.on_sample != nullptr; })) {
    for (std::size_t r = 0; r < requests.size(); ++r)
      total[r] = runner::protocol_steps(requests[r].scenario).size();
    on_sample = [&](std::size_t simulation, const twinbench::Sample& sample) {
      const std::size_t r = owner[simulation];
      if (requests[r].options.on_sample)
        requests[r].options.on_sample(sample, ++reported[r], total[r]);
    };
  }
  std::vector<twinbench::ResultSet> by_simulation;
  try {
    by_simulation = SimulationPool(simulations, on_sample).run(jobs);
  } catch (...) {
    remove_partials();
    throw;
  }
  for (std::size_t r = 0; r < requests.size(); ++r) {
    if (partials[r].empty()) continue;
    for (const auto& file : fs::directory_iterator(partials[r])) {
      fs::rename(file.path(), fs::path(requests[r].capture_dir) / file.path().filename());
    }
    fs::remove(partials[r]);
  }

  std::vector<std::vector<twinbench::ResultSet>> parts(requests.size());
  for (std::size_t i = 0; i < simulations.size(); ++i)
    parts[owner[i]].push_back(std::move(by_simulation[i]));
  std::vector<twinbench::ResultSet> results;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    results.push_back(merge_parts(requests[r].scenario, requests[r].options, parts[r]));
  }
  return results;
}

}  // namespace tb::sim
