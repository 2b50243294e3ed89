#pragma once
// JUnit XML, the test report CI systems show (GitHub, GitLab, Jenkins): one <testsuite> per
// judged set (expectations, a baseline diff, a compare, a validation), one <testcase> per
// expectation check or cell, the numbers in the failure message. tests/inputs/junit.xsd states the
// subset written, which those systems read.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tb::verdicts {

struct JUnitCase {
  std::string classname;  // what was judged: "twinbench.run.latency", "twinbench.diff"
  std::string name;       // the cell or check
  std::optional<std::string> failure;  // the failure message; nullopt when the case passed
  std::string details;                 // text inside <failure>, or <system-out> when it passed
};

struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
};

// The document: <testsuites> with tests/failures totals; characters XML 1.0 cannot hold (control
// bytes, invalid UTF-8) become U+FFFD, so any error text can be reported.
std::string junit_xml(const std::vector<JUnitSuite>& suites);
// Written atomically (scenario/text.hpp).
void write_junit(const std::filesystem::path& file, const std::vector<JUnitSuite>& suites);

}  // namespace tb::verdicts
