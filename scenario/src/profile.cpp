#include "twinbench/scenario/profile.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <fmt/format.h>

#include "twinbench/scenario/load.hpp"

namespace tb::scenario {

twinbench::Scenario parse_profile(const std::string& text, const std::string& origin) {
  struct Collector : google::protobuf::io::ErrorCollector {
    std::string origin, first;
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = fmt::format("{}:{}:{}: {}", origin, line + 1, column + 1, message);
    }
  } errors;
  errors.origin = origin;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  twinbench::Scenario profile;
  if (!parser.ParseFromString(text, &profile)) throw ScenarioError(errors.first);
  if (profile.name().empty())
    throw ScenarioError(origin + ": name: expected the profile's name, got none");
  return profile;
}

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
