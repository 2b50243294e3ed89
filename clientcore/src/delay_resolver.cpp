#include "twinbench/clientcore/delay_resolver.hpp"

namespace tb {

DelayResolver::DelayResolver(Scheduler& scheduler, Duration delay,
                             std::map<std::string, std::string> hosts)
    : scheduler_(scheduler), delay_(delay), hosts_(std::move(hosts)) {}

Resolver::Id DelayResolver::start(const std::string& host) {
  auto it = hosts_.find(host);
  const Id id = next_id_++;
  lookups_[id] = Lookup{scheduler_.now() + delay_, it == hosts_.end() ? std::string{} : it->second};
  return id;
}

Resolver::Status DelayResolver::status(Id id) {
  auto it = lookups_.find(id);
  if (it == lookups_.end()) return Status::kFailed;
  if (scheduler_.now() < it->second.ready) return Status::kWaiting;
  return it->second.address.empty() ? Status::kFailed : Status::kDone;
}

std::string DelayResolver::address(Id id) {
  auto it = lookups_.find(id);
  return it == lookups_.end() ? std::string{} : it->second.address;
}

void DelayResolver::forget(Id id) { lookups_.erase(id); }

}  // namespace tb
