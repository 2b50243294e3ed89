// `twinbench serve`: the benchmark endpoints on a port, HTTP or HTTPS, until Ctrl-C.
#include <fstream>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "twinbench/live/server.hpp"
#include "twinbench/servercore/tls_certs.hpp"
#include "twinbench/scenario/report.hpp"

namespace tb::app {

namespace {

struct ServeArgs {
  live::ServerOptions server;
  bool tls = false;
  std::string key_type = "rsa2048";
  std::uint32_t intermediates = 0;
  std::string ca_out;  // where to write the root certificate; empty: print it on stdout
};

// Generated test certificates for the server; the root CA goes to --tls-ca-out or stdout.
void add_test_certificates(ServeArgs& a) {
  server::CertProfile profile;
  for (auto k : {server::KeyType::kRsa2048, server::KeyType::kRsa4096, server::KeyType::kEd25519,
                 server::KeyType::kEcdsaP256})
    if (a.key_type == server::to_string(k)) profile.key_type = k;
  profile.intermediates = a.intermediates;
  profile.names = {a.server.bind_address, "localhost", "127.0.0.1"};
  const auto credentials = server::make_credentials(profile);
  a.server.tls = std::make_shared<const server::TlsServerContext>(
      server::TlsServerConfig{credentials.chain_pem, credentials.key_pem});
  if (a.ca_out.empty()) {
    std::cout << credentials.ca_pem << std::flush;
  } else {
    scenario::write_file_atomically(a.ca_out, credentials.ca_pem);
    std::cerr << "twinbench serve: wrote the root CA to " << a.ca_out << "\n";
  }
}

void serve_command(ServeArgs a) {
  if (a.tls) add_test_certificates(a);
  live::LiveServer server(a.server);
  std::cerr << "twinbench serve: listening on " << server.base_url() << " (Nagle "
            << (a.server.nodelay ? "off" : "on") << "); Ctrl-C stops\n";
  server.run_foreground();
}

}  // namespace

Command add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  a->server.port = 8927;
  auto* cmd = app.add_subcommand("serve", "Serve the benchmark endpoints (HTTP/1.1 keep-alive)");
  cmd->add_option("--bind", a->server.bind_address, "Address to bind");
  cmd->add_option("--port", a->server.port, "Port (0 = any free port)");
  cmd->add_flag("--nodelay", a->server.nodelay, "Disable Nagle (TCP_NODELAY) on accepted sockets");
  cmd->add_flag("--tls", a->tls, "HTTPS with generated test certificates (TLS 1.2 and 1.3)");
  cmd->add_option("--tls-key-type", a->key_type, "Key type of the certificates")
      ->check(CLI::IsMember({"rsa2048", "rsa4096", "ed25519", "ecdsa-p256"}))
      ->capture_default_str();
  cmd->add_option("--tls-intermediates", a->intermediates, "Intermediate CAs in the chain sent")
      ->check(CLI::Range(0u, 16u));
  cmd->add_option("--tls-ca-out", a->ca_out,
                  "Write the root CA here (default: print it on stdout)");
  return {cmd, [a] { serve_command(*a); }};
}

}  // namespace tb::app
