#pragma once
// Network profiles: the engine, frame_loop, network, tls and target base_url of a Scenario-typed
// textproto, laid over other scenarios (reproduce's and run's --profile). The built-in profiles
// are data of the studies (studies/reproduce.hpp: load_profile).
#include <string>
#include <string_view>

#include "scenario.pb.h"

namespace tb::scenario {

// A profile is a partial Scenario. What it lays over a scenario (engine, frame loop, network, TLS,
// target URL) is validated here, so that errors name the profile's file and line. Throws
// ScenarioError naming origin:line[:column], or the missing name.
twinbench::Scenario parse_profile(const std::string& text, const std::string& origin);
// Lays `profile` over `s`: its engine, frame loop, network, tls section and target's base_url.
void apply_profile(twinbench::Scenario& s, const twinbench::Scenario& profile);
// The scenario of `text` (already checked: parse_scenario) with `profile` laid over it as written,
// then the defaults: those that follow the engine (Godot 3.2's 4 KiB download chunk and TLS 1.2)
// are the profile's engine's, not Godot 4's taken while the scenario named no engine.
twinbench::Scenario scenario_under_profile(std::string_view text, const std::string& origin,
                                           const twinbench::Scenario& profile);

}  // namespace tb::scenario
