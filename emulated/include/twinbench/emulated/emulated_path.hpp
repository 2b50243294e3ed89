#pragma once
// The emulated path assembled: a server side and a client side, each a child in its own network
// namespace with real kernel TCP set from the scenario, joined through their TUN devices by a
// LinkEmulator with the scenario's link. docs/emulated-path.md describes it.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "twinbench/emulated/cores_awake.hpp"
#include "twinbench/emulated/link_emulator.hpp"
#include "twinbench/emulated/path_side.hpp"

namespace tb::emulated {

struct PathConfig {
  scenario::ResolvedLink link;
  scenario::ResolvedTcp client_tcp;
  scenario::ResolvedTcp server_tcp;
  std::uint64_t seed = 0;
  std::int64_t spin_us = 200;
  // Set: PREFIX-client.pcap and PREFIX-server.pcap, what each side's interface sent and received
  // (headers only), in the simulation's naming; time 0 is when the path came up.
  std::string capture_prefix;
};

struct PathReport {
  std::vector<AppliedSetting> client_settings;
  std::vector<AppliedSetting> server_settings;
  DirectionStats uplink;
  DirectionStats downlink;
  LatenessSummary lateness;  // both directions
};

class EmulatedPath {
 public:
  // Starts the server side and waits until its program is ready, then the client side, then the
  // emulator, and lets both programs run. Throws std::runtime_error naming the side and step
  // that failed.
  EmulatedPath(const PathConfig& config, SideProgram server, SideProgram client);
  ~EmulatedPath();

  // Waits for the client program to end; what it wrote and its exit status.
  std::optional<std::string> client_output(const std::function<bool()>& stop = {});
  int client_status();
  // The client side's process (to pass it a signal).
  pid_t client_pid() const;
  // Stops the server and the emulator; the settings and the emulator's figures.
  PathReport finish();

 private:
  std::unique_ptr<PathSide> server_;
  std::unique_ptr<PathSide> client_;
  std::unique_ptr<CoresAwake> cores_awake_;  // while the path runs (cores_awake.hpp)
  std::unique_ptr<LinkEmulator> emulator_;
  std::string capture_prefix_;
  std::int64_t started_ns_ = 0;
};

// What the path needs, checked in order: CAP_NET_ADMIN, a network namespace, a TUN device, and
// each congestion control by setsockopt(TCP_CONGESTION). The first that fails, with what to do;
// nothing when all are there.
struct MissingNeed {
  std::string step;  // "capability", "namespace", "tun", "tcp_congestion"
  std::string message;
};
std::optional<MissingNeed> check_needs(const std::vector<std::string>& congestion_controls);

}  // namespace tb::emulated
