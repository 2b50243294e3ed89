#pragma once
// A scenario's TCP settings applied to the real kernel, in the network namespace of the calling
// process: namespace sysctls for what Linux keeps per namespace, route metrics for what it keeps
// per route (initcwnd, rto_min). Every field is reported: applied, or not and why; nothing is
// dropped silently.
#include <string>
#include <vector>

#include "twinbench/scenario/network.hpp"

namespace tb::emulated {

struct AppliedSetting {
  std::string field;  // the scenario's field, e.g. "congestion_control"
  std::string value;  // what the scenario asked for
  bool applied = false;
  std::string how;  // the sysctl, route metric or option used; or why it was not applied
};

// The kernel's name of a congestion control ("cubic", "bbr", "reno").
std::string kernel_congestion_control(scenario::CongestionControl cc);

// Runs a program (found on PATH) and waits for it; throws std::runtime_error with its exit status.
void run_program(const std::vector<std::string>& argv);

// Writes a sysctl of the calling process's namespace ("net/ipv4/tcp_sack") and reads it back;
// throws std::runtime_error naming the sysctl when either fails.
void write_sysctl(const std::string& name, const std::string& value);

// Applies `tcp` to the current namespace, whose only route to the peer is `peer` on `device`
// (replaced with the scenario's metrics). The caller must own the namespace.
std::vector<AppliedSetting> apply_kernel_tcp(const scenario::ResolvedTcp& tcp,
                                             const std::string& device, const std::string& peer);

}  // namespace tb::emulated
