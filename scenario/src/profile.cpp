#include "twinbench/scenario/profile.hpp"

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

}  // namespace tb::scenario
