#include "twinbench/sim/ns_scheduler.hpp"

#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>

#include <algorithm>

namespace tb::sim {

SimulationScope::SimulationScope(std::uint64_t seed) {
  ns3::RngSeedManager::SetSeed(1);
  ns3::RngSeedManager::SetRun(seed);
}

namespace {
std::uint64_t events_of_ended_simulations = 0;  // a process runs one simulation at a time
}  // namespace

SimulationScope::~SimulationScope() {
  events_of_ended_simulations += ns3::Simulator::GetEventCount();
  ns3::Simulator::Destroy();
}

std::uint64_t events_executed_in_process() { return events_of_ended_simulations; }

Time NsScheduler::now() const { return Time(ns3::Simulator::Now().GetNanoSeconds()); }

void NsScheduler::schedule_at(Time at, std::function<void()> fn) {
  const Time delay = std::max(at - now(), Time(0));
  ns3::Simulator::Schedule(ns3::NanoSeconds(delay.count()), [this, fn = std::move(fn)] {
    fn();
    check_done();
  });
}

void NsScheduler::check_done() {
  if (done_ != nullptr && (*done_)()) ns3::Simulator::Stop();
}

bool NsScheduler::run_until(const std::function<bool()>& done, tb::Duration timeout,
                            tb::Duration poll) {
  if (done()) return true;
  done_ = &done;
  // Our own stop event rather than Simulator::Stop(delay), which cannot be cancelled and would
  // stop a later run.
  const ns3::EventId deadline =
      ns3::Simulator::Schedule(ns3::NanoSeconds(timeout.count()), [] { ns3::Simulator::Stop(); });
  ns3::EventId poller;
  std::function<void()> poll_once = [&] {
    check_done();
    poller = ns3::Simulator::Schedule(ns3::NanoSeconds(poll.count()), poll_once);
  };
  if (poll > tb::Duration::zero())
    poller = ns3::Simulator::Schedule(ns3::NanoSeconds(poll.count()), poll_once);
  ns3::Simulator::Run();
  ns3::Simulator::Cancel(deadline);
  ns3::Simulator::Cancel(poller);
  done_ = nullptr;
  return done();
}

}  // namespace tb::sim
