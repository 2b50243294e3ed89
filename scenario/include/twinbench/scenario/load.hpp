// Loading scenarios from textproto files: syntax and schema errors, defaults, semantic checks.
// Every error names the file, the line of the offending field and what was expected, so a user can
// fix a scenario without reading this code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "scenario.pb.h"
#include "twinbench/scenario/input_error.hpp"

namespace tb::scenario {

// A scenario that cannot be parsed or is not valid. what(): "FILE:LINE[:COL]: <what>".
class ScenarioError : public InputError {
 public:
  using InputError::InputError;
};

// Reads, parses, fills in defaults and validates. Throws ScenarioError (also if unreadable).
twinbench::Scenario load_scenario(const std::filesystem::path& file);

// Same from text; `origin` names the source in messages (a path, or "<string>").
twinbench::Scenario parse_scenario(std::string_view text, const std::string& origin);

// Fills in every default documented in docs/scenarios.md; idempotent.
void apply_defaults(twinbench::Scenario& scenario);

// Semantic checks for a scenario built in code. Unset fields that have defaults are accepted, as
// they are in files. Errors read "ORIGIN: FIELD: expected ..., got ...".
void validate_scenario(const twinbench::Scenario& scenario, const std::string& origin);

// The request path for one body size: ping_path for 0, else the download template with "{bytes}"
// replaced by the decimal size. Unset paths fall back to their defaults.
std::string target_path(const twinbench::Scenario& scenario, std::uint64_t body_bytes);

}  // namespace tb::scenario
