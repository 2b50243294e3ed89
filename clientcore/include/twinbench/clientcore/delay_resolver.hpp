#pragma once
// Name resolution on simulated time: every name resolves to one address after a fixed delay
// (a warm OS cache is ~0). Used by the simulated backend and the tests.
#include <map>
#include <string>

#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/clientcore/scheduler.hpp"

namespace tb {

class DelayResolver : public Resolver {
 public:
  DelayResolver(Scheduler& scheduler, Duration delay, std::map<std::string, std::string> hosts);
  Id start(const std::string& host) override;
  Status status(Id id) override;
  std::string address(Id id) override;
  void forget(Id id) override;

 private:
  struct Lookup {
    Time ready;
    std::string address;  // empty: unknown name
  };
  Scheduler& scheduler_;
  Duration delay_;
  std::map<std::string, std::string> hosts_;
  std::map<Id, Lookup> lookups_;
  Id next_id_ = 1;
};

}  // namespace tb
