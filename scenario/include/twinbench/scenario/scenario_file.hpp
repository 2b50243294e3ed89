// Loading scenarios from textproto files: syntax and schema errors, defaults, semantic checks.
// Every error names the file, the line of the offending field and what was expected, so a user can
// fix a scenario without reading this code.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include <google/protobuf/text_format.h>

#include "scenario.pb.h"
#include "twinbench/scenario/input_error.hpp"

namespace tb::scenario {

// Limits of what a scenario may ask for: beyond them a run would exhaust memory or time, or the
// benchmark server refuses (its largest download, servercore's max_download_bytes).
constexpr std::uint32_t kMaxFrameCap = 1000;         // fps
constexpr std::uint64_t kMaxBodyBytes = 1ull << 34;  // 16 GiB
constexpr std::uint32_t kMaxRounds = 100'000;        // runs, and warmups, per cell
constexpr std::uint64_t kMaxSamples = 1'000'000;     // cells x (runs + warmups)

// A scenario that cannot be parsed or is not valid. what(): "FILE:LINE[:COL]: <what>".
class ScenarioError : public InputError {
 public:
  using InputError::InputError;
};

// Reads, parses, fills in defaults and validates. Throws ScenarioError (also if unreadable).
twinbench::Scenario load_scenario(const std::filesystem::path& file);

// Same from text; `origin` names the source in messages (a path, or "<string>").
twinbench::Scenario parse_scenario(std::string_view text, const std::string& origin);

// Parses any textproto message; throws ScenarioError "ORIGIN:LINE:COLUMN: <the parser's first
// error>". `tree`, if given, receives each field's location.
void parse_textproto(std::string_view text, const std::string& origin,
                     google::protobuf::Message& message,
                     google::protobuf::TextFormat::ParseInfoTree* tree = nullptr);

// The 1-based line of a top-level field (element `index` of a repeated one) in scenario text, or
// -1 if the text does not parse or lacks it: for errors found later, such as a bad sweep axis.
int field_line(std::string_view text, std::string_view field, int index = -1);

// Fills in every default documented in docs/scenarios.md; idempotent.
void apply_defaults(twinbench::Scenario& scenario);

// Semantic checks for a scenario built in code. Unset fields that have defaults are accepted, as
// they are in files. Errors read "ORIGIN: FIELD: expected ..., got ...".
void validate_scenario(const twinbench::Scenario& scenario, const std::string& origin);

// The request path for one body size: ping_path for 0, else the download template with "{bytes}"
// replaced by the decimal size. Unset paths fall back to their defaults.
std::string target_path(const twinbench::Scenario& scenario, std::uint64_t body_bytes);

}  // namespace tb::scenario
