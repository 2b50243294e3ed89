#include "twinbench/runner/tls_setup.hpp"

#include "twinbench/scenario/scenario_file.hpp"

namespace tb::runner {

bool uses_tls(const twinbench::Scenario& s) {
  return s.has_tls() || s.target().base_url().starts_with("https://");
}

servercore::KeyType key_type(twinbench::KeyType k) {
  switch (k) {
    case twinbench::RSA_4096:
      return servercore::KeyType::kRsa4096;
    case twinbench::ED25519:
      return servercore::KeyType::kEd25519;
    case twinbench::ECDSA_P256:
      return servercore::KeyType::kEcdsaP256;
    default:
      return servercore::KeyType::kRsa2048;
  }
}

namespace {

twinbench::Tls with_defaults(const twinbench::Scenario& scenario) {
  twinbench::Scenario s = scenario;
  s.mutable_tls();  // present, so the defaults fill it
  scenario::apply_defaults(s);
  return s.tls();
}

TlsVersion client_version(twinbench::TlsVersion v) {
  return v == twinbench::TLS1_2 ? TlsVersion::k1_2 : TlsVersion::k1_3;
}

}  // namespace

TlsClientConfig client_tls_config(const twinbench::Scenario& scenario, std::string ca_pem) {
  const twinbench::Tls t = with_defaults(scenario);
  TlsClientConfig config;
  config.trusted_ca_pem = std::move(ca_pem);
  config.min_version = client_version(t.min_version());
  config.max_version = client_version(t.max_version());
  config.resumption = t.resumption();
  return config;
}

servercore::CertProfile cert_profile(const twinbench::Scenario& scenario,
                                     std::vector<std::string> server_names) {
  const twinbench::Tls t = with_defaults(scenario);
  servercore::CertProfile profile;
  profile.key_type = key_type(t.key_type());
  profile.intermediates = t.intermediates();
  profile.names = std::move(server_names);
  return profile;
}

TlsSetup make_tls_setup(const twinbench::Scenario& scenario, std::vector<std::string> server_names,
                        ServerTiming timing) {
  const twinbench::Tls t = with_defaults(scenario);
  const servercore::Credentials credentials =
      servercore::make_credentials(cert_profile(scenario, std::move(server_names)));

  const auto server_version = [](twinbench::TlsVersion v) {
    return v == twinbench::TLS1_2 ? servercore::TlsVersion::k1_2 : servercore::TlsVersion::k1_3;
  };
  servercore::TlsServerConfig server_config;
  server_config.chain_pem = credentials.chain_pem;
  server_config.key_pem = credentials.key_pem;
  server_config.min_version = server_version(t.min_version());
  server_config.max_version = server_version(t.max_version());
  server_config.resumption = t.resumption();
  if (t.has_server_tickets()) server_config.tickets = t.server_tickets();
  server_config.rsa_blinding = timing == ServerTiming::kObservable;

  TlsSetup setup;
  setup.server = std::make_shared<const servercore::TlsServerContext>(server_config);
  setup.client = client_tls_config(scenario, credentials.ca_pem);
  setup.ca_pem = credentials.ca_pem;
  setup.handshake_cpu_ms = t.handshake_cpu_ms();
  return setup;
}

}  // namespace tb::runner
