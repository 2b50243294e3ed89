#pragma once
// The six client variants of the published run, and small scenarios built from them in code.
#include <string>
#include <vector>

#include "scenario.pb.h"
#include "twinbench/scenario/scenario_file.hpp"

namespace tb::testing {

struct VariantCase {
  std::string name;
  twinbench::ClientKind client;
  bool threaded;
  bool session;
};

inline const std::vector<VariantCase> kVariants = {
    {"c3_coop", twinbench::C3HTTP, false, false},
    {"c3_thr", twinbench::C3HTTP, true, false},
    {"c3s_coop", twinbench::C3HTTP, false, true},
    {"c3s_thr", twinbench::C3HTTP, true, true},
    {"nat_coop", twinbench::HTTP_REQUEST, false, false},
    {"nat_thr", twinbench::HTTP_REQUEST, true, false},
};

inline twinbench::Scenario scenario_for(std::vector<std::uint32_t> caps,
                                        std::vector<std::uint64_t> sizes,
                                        std::vector<VariantCase> variants, bool to_file,
                                        std::uint32_t runs = 3) {
  twinbench::Scenario s;
  s.set_name("integration");
  s.set_engine(twinbench::GODOT4);
  for (const auto& v : variants) {
    auto* out = s.add_variants();
    out->set_name(v.name);
    out->set_client(v.client);
    out->set_threaded(v.threaded);
    out->set_session(v.session);
  }
  for (auto c : caps) s.add_frame_caps(c);
  for (auto b : sizes) s.add_body_bytes(b);
  s.set_runs(runs);
  s.set_warmups(1);
  s.set_download_to_file(to_file);
  // Zero bytes must hit the download endpoint here, not the ping.
  s.mutable_target()->set_ping_path("/api/benchmark/download/0/");
  scenario::apply_defaults(s);
  scenario::validate_scenario(s, "integration");
  return s;
}

}  // namespace tb::testing
