#pragma once
// `twinbench shell`: the emulated path as a shell, the way Mahimahi's mm-delay and mm-link compose.
// A command of the user's (a game build, a test client, curl) runs in the client namespace behind
// the scenario's link and client TCP settings; the server namespace runs the benchmark server
// with the scenario's server settings, or a server command of the user's. The command's stdin,
// stdout and stderr pass through and its exit status is the shell's (docs/real-clients.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scenario.pb.h"

namespace tb::emulated {

struct ShellOptions {
  std::vector<std::string> command;  // argv; run with execvp
  std::string server_command;        // /bin/sh -c; empty: the benchmark server
  std::uint16_t server_port = 0;     // 0: kEmulatedServerPort
  std::string user;                  // run the command as this user (not root); empty: as is
  std::string report;                // file for the link's timing report (JSON); empty: none
  std::string ca_out;                // where the root CA goes (HTTPS); empty: a temporary file
  std::uint64_t seed = 1;            // the link's loss and jitter
  bool quiet = false;                // no summary line on stderr
};

// The environment the command sees, beside its own.
inline constexpr const char* kServerUrlVariable = "TWINBENCH_SERVER_URL";  // http(s)://addr:port
inline constexpr const char* kServerAddressVariable = "TWINBENCH_SERVER_ADDRESS";
inline constexpr const char* kServerPortVariable = "TWINBENCH_SERVER_PORT";
inline constexpr const char* kCaFileVariable = "TWINBENCH_CA_FILE";  // HTTPS only

// Runs the command behind the scenario's link; returns its exit status, 128 + the signal when a
// signal ended it. Throws PathUnavailable (exit 2) when the path cannot be built here, InputError
// for a bad option (an unknown user), std::runtime_error when the path fails.
int run_shell(const twinbench::Scenario& scenario, const ShellOptions& options);

}  // namespace tb::emulated
