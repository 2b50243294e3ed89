#include "twinbench/sim/sim_backend.hpp"

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
#include "twinbench/parallel/unit_channels.hpp"
#include "twinbench/clientcore/url.hpp"
#include "twinbench/scenario/load.hpp"

namespace tb::sim {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class CountingSink : public BodySink {
 public:
  explicit CountingSink(std::uint64_t& bytes) : bytes_(bytes) {}
  bool write(std::span<const std::byte> data) override {
    bytes_ += data.size();
    return true;
  }
  bool finish() override { return true; }

 private:
  std::uint64_t& bytes_;
};

std::string simulated_base_url(const twinbench::Scenario& s, const sim::SimNetwork& network) {
  const auto url = parse_url(s.target().base_url());
  const std::string host = url ? url->host : network.server_address();
  return (runner::uses_tls(s) ? "https://" : "http://") + host + ":" +
         std::to_string(network.server_port());
}

// What the simulated server's certificate names: the target's host and the server's address.
std::vector<std::string> simulated_server_names(const twinbench::Scenario& s) {
  std::vector<std::string> names;
  if (const auto url = parse_url(s.target().base_url())) names.push_back(url->host);
  names.push_back(sim::SimNetwork::kServerAddress);
  return names;
}

std::optional<runner::TlsSetup> simulated_tls(const twinbench::Scenario& s) {
  if (!runner::uses_tls(s)) return std::nullopt;
  return runner::make_tls_setup(s, simulated_server_names(s));
}

sim::SimTls sim_tls(const std::optional<runner::TlsSetup>& tls) {
  if (!tls) return {};
  return sim::SimTls{tls->server, tls->handshake_cpu_ms};
}

std::map<std::string, std::string> hosts(const twinbench::Scenario& s,
                                         const sim::SimNetwork& network) {
  std::map<std::string, std::string> table;
  if (const auto url = parse_url(s.target().base_url()))
    table[url->host] = network.server_address();
  return table;
}

}  // namespace

void require_simulatable(const twinbench::Scenario& s, const std::string& origin) {
  if (!s.has_network()) {
    throw scenario::ScenarioError(origin +
                                  ": network: expected a network section (link delays and rates) "
                                  "to run with --backend sim");
  }
  const bool uncapped =
      std::find(s.frame_caps().begin(), s.frame_caps().end(), 0u) != s.frame_caps().end();
  if (uncapped && !(s.frame_loop().frame_work_ms() > 0)) {
    throw scenario::ScenarioError(origin +
                                  ": frame_loop.frame_work_ms: expected > 0 when frame_caps has 0 "
                                  "(uncapped) in simulation, got 0");
  }
}

std::unique_ptr<BodySink> CountingSinks::open(const std::string& name) {
  written_[name] = 0;
  return std::make_unique<CountingSink>(written_[name]);
}

std::string CountingSinks::check_and_remove(const std::string& name, std::uint64_t expected) {
  auto it = written_.find(name);
  if (it == written_.end()) return "download sink missing: " + name;
  const std::uint64_t got = it->second;
  written_.erase(it);
  if (got != expected) {
    return "download sink has " + std::to_string(got) + " bytes, expected " +
           std::to_string(expected);
  }
  return {};
}

SimBackend::SimBackend(const twinbench::Scenario& scenario, std::uint64_t seed)
    : scope_(seed),
      random_(runner::uses_tls(scenario) ? std::make_unique<server::DeterministicRandom>(seed)
                                         : nullptr),
      tls_(simulated_tls(scenario)),
      tls_client_(tls_ ? std::optional(tls_->client) : std::nullopt),
      network_(scenario.network(), seed, {}, sim_tls(tls_)),
      threads_(scheduler_, Duration{1000}),
      base_url_(simulated_base_url(scenario, network_)),
      resolver_(scheduler_, from_ms(scenario.network().resolve_ms()), hosts(scenario, network_)),
      backend_{scheduler_,
               threads_,
               network_.client_transports(),
               resolver_,
               sinks_,
               [this](const std::function<bool()>& done, Duration timeout) {
                 return scheduler_.run_until(done, timeout);
               },
               [this](const std::string& name, std::uint64_t expected) {
                 return sinks_.check_and_remove(name, expected);
               },
               "sim"} {}

namespace {

// One simulation of part of a scenario run ("world"): the scenario (with only its frame cap when
// Sessions are per cap), the variants simulated elsewhere, and the worlds whose steps this one
// waits out (indices among the scenario's worlds).
struct World {
  twinbench::Scenario scenario;
  std::optional<runner::StepsElsewhere> elsewhere;
  std::vector<std::size_t> waits_for;
};

// A scenario's worlds. Nothing carries over between frame caps when Sessions are per cap: one
// world per cap. Within one, a variant without a Session opens a fresh connection for every
// request, so what a request takes does not depend on when it starts: each such variant gets a
// world of its own, which passes over the other variants' steps one frame each (ending in the
// phase where their scripts would resume: runner::StepsElsewhere). The Session variants keep their
// connections, whose idle gaps (BBR's min-RTT expiry, keep-alive timeouts) are the other
// variants' steps: they run together in one more world that waits those steps out, frame for
// frame, as the fresh-connection worlds record them (run_all). `whole_run`: only the split per
// frame cap, which is exact.
std::vector<World> split_worlds(const twinbench::Scenario& s, bool whole_run) {
  std::vector<twinbench::Scenario> parts;
  if (s.session_scope() == twinbench::PER_FRAME_CAP && s.frame_caps_size() > 1) {
    for (std::uint32_t cap : s.frame_caps()) {
      twinbench::Scenario part = s;
      part.clear_frame_caps();
      part.add_frame_caps(cap);
      parts.push_back(std::move(part));
    }
  } else {
    parts.push_back(s);
  }
  std::vector<std::string> fresh;  // in the scenario's order, which numbers the worlds
  std::set<std::string> kept;
  for (const auto& v : s.variants()) {
    if (v.session()) {
      kept.insert(v.name());
    } else {
      fresh.push_back(v.name());
    }
  }
  std::vector<World> worlds;
  for (auto& part : parts) {
    if (whole_run || fresh.empty() || s.variants_size() < 2) {
      worlds.push_back(World{std::move(part), std::nullopt, {}});
      continue;
    }
    std::vector<std::size_t> fresh_worlds;
    for (const auto& name : fresh) {
      runner::StepsElsewhere others{kept, {}};
      for (const auto& other : fresh) {
        if (other != name) others.variants.insert(other);
      }
      fresh_worlds.push_back(worlds.size());
      worlds.push_back(World{part, std::move(others), {}});
    }
    if (!kept.empty()) {
      // Its steps' spans come from the fresh worlds when it runs (run_all).
      runner::StepsElsewhere others{{fresh.begin(), fresh.end()}, {}};
      worlds.push_back(World{std::move(part), std::move(others), std::move(fresh_worlds)});
    }
  }
  return worlds;
}

// One simulation of a scenario run: a world's scenario, its options (with the variants simulated
// elsewhere) and seed, where its captures go, and the units whose steps it waits out.
struct Unit {
  twinbench::Scenario scenario;
  runner::RunOptions options;
  std::uint64_t seed = 0;
  std::string capture_prefix;
  std::vector<std::size_t> waits_for;
};

twinbench::ResultSet run_unit(const Unit& unit) {
  SimBackend sim(unit.scenario, unit.seed);
  if (!unit.capture_prefix.empty()) sim.capture(unit.capture_prefix);
  runner::RunOptions options = unit.options;
  options.base_url = sim.base_url();
  options.tls = sim.tls_client();
  return runner::run_scenario(unit.scenario, sim.backend(), options);
}

// A scenario's units, each with the seed derived from the run's seed and its index, so that
// results do not depend on how units are scheduled. `first`: the index of the first unit.
std::vector<Unit> units_of(const SimulationRequest& request, const std::string& capture_dir,
                           std::size_t first) {
  const auto& options = request.options;
  std::vector<Unit> units;
  for (auto& world : split_worlds(request.scenario, request.whole_run)) {
    const std::size_t i = units.size();
    Unit unit{std::move(world.scenario),
              options,
              splitmix64(options.seed * 1000003u + i),
              capture_dir.empty() ? "" : capture_dir + "/unit-" + std::to_string(i),
              {}};
    unit.options.elsewhere = std::move(world.elsewhere);
    for (const auto w : world.waits_for) unit.waits_for.push_back(first + w);
    units.push_back(std::move(unit));
  }
  return units;
}

// The samples of a scenario's units in its protocol order, as one run would have recorded them.
twinbench::ResultSet merge_units(const twinbench::Scenario& scenario,
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
        throw std::logic_error("a unit's sample is not a step of its scenario");
      samples.emplace_back(it->second, &sample);
    }
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [position, sample] : samples) *merged.add_samples() = *sample;
  return merged;
}

// What a unit costs to simulate, roughly: the bytes it moves, with each request counted as 64 KiB.
double simulated_bytes(const Unit& unit) {
  const auto& s = unit.scenario;
  double per_round = 0;
  for (const auto bytes : s.body_bytes()) per_round += static_cast<double>(bytes) + 65536.0;
  const auto elsewhere = unit.options.elsewhere ? unit.options.elsewhere->variants.size() : 0;
  return per_round * static_cast<double>(s.variants_size() - elsewhere) * s.frame_caps_size() *
         (s.runs() + s.warmups());
}

// What a unit holds up: its own cost and the costliest chain of units waiting for it.
double held_up(const std::vector<Unit>& units, std::size_t i) {
  double waiting = 0;
  for (std::size_t j = 0; j < units.size(); ++j) {
    const auto& w = units[j].waits_for;
    if (std::find(w.begin(), w.end(), i) != w.end()) waiting = std::max(waiting, held_up(units, j));
  }
  return simulated_bytes(units[i]) + waiting;
}

// Runs every unit and returns their results by index: in `jobs` worker processes when there are
// several (each child leaves its ResultSet in a file), else here. Here, a unit that waits out
// others' steps runs after them, given their spans. In worker processes it starts together with
// them, beyond `jobs` (it waits for their spans most of the time) and is fed their spans as they
// are recorded (SpanFeed). The unit holding up the most work starts first (longest-processing-time
// order): a long simulation then overlaps the short ones. `on_sample`, if given, gets every sample
// as it is recorded, from whichever unit.
std::vector<twinbench::ResultSet> run_all(const std::vector<Unit>& units, unsigned jobs,
                                          const parallel::SampleChannel::Receiver& on_sample) {
  std::vector<std::size_t> order(units.size());
  std::vector<double> weight(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) {
    order[i] = i;
    weight[i] = held_up(units, i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
  std::vector<twinbench::ResultSet> results(units.size());
  std::vector<bool> done(units.size(), false);
  const auto waits = [&](std::size_t waiting, std::size_t i) {
    const auto& w = units[waiting].waits_for;
    return std::find(w.begin(), w.end(), i) != w.end();
  };
  const auto finish = [&](std::size_t i, twinbench::ResultSet r) {
    results[i] = std::move(r);
    done[i] = true;
  };
  // A unit as it runs: reporting its samples to `report`, and with the spans of the steps it
  // waits out from `span_of_step`, if it waits any out.
  const auto prepared = [&](std::size_t i,
                            const std::function<void(const twinbench::Sample&)>& report,
                            std::function<runner::StepSpan(const runner::StepKey&)> span_of_step) {
    Unit unit = units[i];
    unit.options.on_sample = nullptr;
    if (report)
      unit.options.on_sample = [report](const twinbench::Sample& s, std::size_t, std::size_t) {
        report(s);
      };
    if (!unit.waits_for.empty()) unit.options.elsewhere->span_of_step = std::move(span_of_step);
    return unit;
  };

  if (jobs <= 1 || units.size() <= 1) {
    // The first unit in order whose units to wait for are done and that is not done, until none is
    // left.
    for (auto k = order.begin(); k != order.end();) {
      const std::size_t i = *k;
      const auto& w = units[i].waits_for;
      if (done[i] || !std::all_of(w.begin(), w.end(), [&](std::size_t j) { return done[j]; })) {
        ++k;
        continue;
      }
      std::function<void(const twinbench::Sample&)> report;
      if (on_sample) report = [&on_sample, i](const twinbench::Sample& s) { on_sample(i, s); };
      auto spans = std::make_shared<std::map<runner::StepKey, runner::StepSpan>>();
      for (const auto j : w) {
        for (const auto& sample : results[j].samples())
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
      finish(i, run_unit(prepared(i, report, span_of_step)));
      k = order.begin();  // a unit may have become ready
    }
  } else {
    // Test credentials are made once per process and cached (RSA key generation was ~90 % of a
    // small unit's time): made here, the children inherit them.
    for (const auto& unit : units)
      if (runner::uses_tls(unit.scenario))
        server::make_credentials(
            runner::cert_profile(unit.scenario, simulated_server_names(unit.scenario)));
    namespace fs = std::filesystem;
    const fs::path dir =
        fs::temp_directory_path() / ("twinbench-units-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    // Removed however this ends (run_forked throws if fork or waitpid fails).
    struct RemoveOnExit {
      fs::path dir;
      ~RemoveOnExit() {
        std::error_code ignored;
        fs::remove_all(dir, ignored);
      }
    } remove_dir{dir};
    auto file_of = [&](std::size_t i) { return dir / ("unit-" + std::to_string(i) + ".pb"); };

    // Each unit that waits out others' steps, with its feed, and the units it starts with: all of
    // them, since each round it needs a span from each, so it keeps pace only while they all run.
    std::map<std::size_t, std::unique_ptr<parallel::SpanFeed>> feeds;
    std::vector<std::size_t> position(units.size());
    for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
    std::vector<std::vector<std::size_t>> group(
        units.size());  // by position in `order`, of positions
    for (std::size_t i = 0; i < units.size(); ++i) {
      if (units[i].waits_for.empty()) continue;
      feeds.emplace(i, std::make_unique<parallel::SpanFeed>());
      std::vector<std::size_t> members{position[i]};
      for (const auto j : units[i].waits_for) members.push_back(position[j]);
      for (const auto member : members) group[member] = members;
    }
    parallel::SampleChannel channel;
    const parallel::SampleChannel::Receiver receive = [&](std::size_t unit,
                                                          const twinbench::Sample& sample) {
      if (on_sample) on_sample(unit, sample);
      for (auto& [waiting, feed] : feeds) {
        if (waits(waiting, unit)) feed->add(sample);
      }
    };
    const auto feeds_waiting_for = [&](std::size_t i, auto&& each) {
      for (auto& [waiting, feed] : feeds) {
        if (waits(waiting, i)) each(waiting, *feed);
      }
    };

    std::string failure;
    const auto failed = parallel::run_forked(
        order.size(), jobs,
        [&](std::size_t k) {
          const std::size_t i = order[k];
          for (auto& [waiting, feed] : feeds) feed->keep_in_child(waiting == i);
          twinbench::ResultSet r;
          try {
            std::function<void(const twinbench::Sample&)> report;
            const bool waited_for = std::any_of(units.begin(), units.end(), [&](const Unit& u) {
              return std::find(u.waits_for.begin(), u.waits_for.end(), i) != u.waits_for.end();
            });
            if (on_sample || waited_for) {
              report = [&channel, i](const twinbench::Sample& s) {
                channel.send(static_cast<std::uint32_t>(i), s);
              };
            }
            std::function<runner::StepSpan(const runner::StepKey&)> span_of_step;
            if (const auto feed = feeds.find(i); feed != feeds.end()) {
              span_of_step = [f = feed->second.get()](const runner::StepKey& step) {
                return f->span_of_step(step);
              };
            }
            r = run_unit(prepared(i, report, span_of_step));
          } catch (const std::exception& e) {
            throw std::runtime_error("unit " + std::to_string(i) + ": " + e.what());
          }
          std::ofstream out(file_of(i), std::ios::binary);
          return r.SerializeToOstream(&out) && out.flush() ? 0 : 3;
        },
        [&](std::size_t k, bool ok) {
          const std::size_t i = order[k];
          channel.receive(0, receive);  // what it sent last, before its feeds end
          if (ok) {
            twinbench::ResultSet r;
            std::ifstream in(file_of(i), std::ios::binary);
            if (r.ParseFromIstream(&in)) {
              finish(i, std::move(r));
            } else if (failure.empty()) {
              failure = "cannot read the results of unit " + std::to_string(i);
            }
          }
          if (!ok || !failure.empty()) {
            for (auto& [waiting, feed] : feeds)
              feed->finish();  // nothing more comes: the waiting stop
            return;
          }
          feeds_waiting_for(i, [&](std::size_t waiting, parallel::SpanFeed& feed) {
            const auto& w = units[waiting].waits_for;
            if (std::all_of(w.begin(), w.end(), [&](std::size_t j) { return done[j]; }))
              feed.finish();
          });
        },
        [&](std::size_t k) { return group[k]; },
        [&] {
          channel.receive(20, receive);
          for (auto& [waiting, feed] : feeds) feed->flush();
        });
    channel.receive(0, receive);
    if (failed)
      throw std::runtime_error("simulation unit " + std::to_string(order[*failed]) + " failed");
    if (!failure.empty()) throw std::runtime_error(failure);
  }
  if (!std::all_of(done.begin(), done.end(), [](bool d) { return d; })) {
    throw std::logic_error("simulation units wait for each other");
  }
  return results;
}

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
  // capture_dir only once every unit has finished (and closed its files), so a failed or
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

  std::vector<Unit> units;
  std::vector<std::size_t> owner;  // the request each unit belongs to
  for (std::size_t r = 0; r < requests.size(); ++r) {
    for (auto& unit : units_of(requests[r], partials[r].string(), units.size())) {
      units.push_back(std::move(unit));
      owner.push_back(r);
    }
    if (!partials[r].empty()) fs::create_directories(partials[r]);
  }
  // Progress: each request's samples counted against its whole protocol, whichever unit sent them.
  std::vector<std::size_t> reported(requests.size(), 0);
  std::vector<std::size_t> total(requests.size(), 0);
  parallel::SampleChannel::Receiver on_sample;
  if (std::any_of(requests.begin(), requests.end(),
                  [](const auto& r) { return r.options.on_sample != nullptr; })) {
    for (std::size_t r = 0; r < requests.size(); ++r)
      total[r] = runner::protocol_steps(requests[r].scenario).size();
    on_sample = [&](std::size_t unit, const twinbench::Sample& sample) {
      const std::size_t r = owner[unit];
      if (requests[r].options.on_sample)
        requests[r].options.on_sample(sample, ++reported[r], total[r]);
    };
  }
  std::vector<twinbench::ResultSet> by_unit;
  try {
    by_unit = run_all(units, jobs, on_sample);
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
  for (std::size_t i = 0; i < units.size(); ++i) parts[owner[i]].push_back(std::move(by_unit[i]));
  std::vector<twinbench::ResultSet> results;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    results.push_back(merge_units(requests[r].scenario, requests[r].options, parts[r]));
  }
  return results;
}

}  // namespace tb::sim
