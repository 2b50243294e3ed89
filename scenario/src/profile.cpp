#include "twinbench/scenario/profile.hpp"

#include "twinbench/scenario/scenario_file.hpp"

namespace tb::scenario {

void apply_profile(twinbench::Scenario& s, const twinbench::Scenario& profile) {
  s.set_engine(profile.engine());
  *s.mutable_frame_loop() = profile.frame_loop();
  *s.mutable_network() = profile.network();
  // HTTPS: the profile's tls section and its target's base_url (scheme and host; an https://
  // URL alone means TLS with the defaults). The paths stay the scenario's.
  if (profile.has_tls()) *s.mutable_tls() = profile.tls();
  if (!profile.target().base_url().empty())
    s.mutable_target()->set_base_url(profile.target().base_url());
}

twinbench::Scenario scenario_under_profile(std::string_view text, const std::string& origin,
                                           const twinbench::Scenario& profile) {
  twinbench::Scenario s;
  parse_textproto(text, origin, s);
  apply_profile(s, profile);
  apply_defaults(s);
  return s;
}

}  // namespace tb::scenario
