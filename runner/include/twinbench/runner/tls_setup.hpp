#pragma once
// HTTPS for a run: the scenario's tls section mapped onto the server and client cores, with test
// credentials generated for the names the clients will use.
#include <memory>
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "twinbench/clientcore/tls_client.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/servercore/tls_server.hpp"

namespace tb::runner {

struct TlsSetup {
  std::shared_ptr<const servercore::TlsServerContext> server;
  TlsClientConfig client;  // trusts the generated root
  std::string ca_pem;
  double handshake_cpu_ms = 0;
};

// An https:// base_url or a tls section.
bool uses_tls(const twinbench::Scenario& scenario);
servercore::KeyType key_type(twinbench::KeyType k);
// The clients' side alone (for a server the run does not start), trusting `ca_pem` (empty: the
// system's roots).
TlsClientConfig client_tls_config(const twinbench::Scenario& scenario, std::string ca_pem);
// The test credentials' profile: the scenario's key type and chain; `server_names`: what the
// server certificate names (host names or IP literals).
servercore::CertProfile cert_profile(const twinbench::Scenario& scenario,
                                     std::vector<std::string> server_names);
// The server and client sides, with the credentials of cert_profile (made once per process).
// `timing`: whether the server's timing can be observed from outside (real sockets); a
// simulated server's is not, and its RSA operations skip blinding (TlsServerConfig).
enum class ServerTiming { kObservable, kSimulated };
TlsSetup make_tls_setup(const twinbench::Scenario& scenario, std::vector<std::string> server_names,
                        ServerTiming timing = ServerTiming::kObservable);

}  // namespace tb::runner
