#pragma once
// JUnit reports checked against tests/inputs/junit.xsd with xmllint (libxml2-utils).
#include <filesystem>
#include <string>

namespace tb::testing {

// xmllint's complaints about `file` against the schema; empty when it validates. Says so when
// xmllint is missing (scripts/setup.sh installs it).
std::string junit_schema_errors(const std::filesystem::path& file);

}  // namespace tb::testing
