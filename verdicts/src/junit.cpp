#include "twinbench/verdicts/junit.hpp"

#include <fmt/format.h>

#include "twinbench/scenario/text.hpp"

namespace tb::verdicts {
namespace {

// Text for an attribute or element: markup escaped, what XML 1.0 cannot hold replaced.
std::string escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    const std::size_t n = scenario::utf8_sequence_length(s, i);
    if (n == 0 || (n == 1 && static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' &&
                   c != '\r')) {
      out += "\xef\xbf\xbd";  // U+FFFD
      ++i;
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::size_t failures(const JUnitSuite& suite) {
  std::size_t n = 0;
  for (const auto& c : suite.cases) n += c.failure ? 1 : 0;
  return n;
}

}  // namespace

std::string junit_xml(const std::vector<JUnitSuite>& suites) {
  std::size_t tests = 0, failed = 0;
  for (const auto& s : suites) {
    tests += s.cases.size();
    failed += failures(s);
  }
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"twinbench\" tests=\"{}\" failures=\"{}\" errors=\"0\" time=\"0\">\n",
      tests, failed);
  for (const auto& s : suites) {
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\" "
        "time=\"0\">\n",
        escaped(s.name), s.cases.size(), failures(s));
    for (const auto& c : s.cases) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\"", escaped(c.classname),
                         escaped(c.name));
      if (c.failure) {
        out += fmt::format(">\n      <failure message=\"{}\" type=\"twinbench\">{}</failure>\n",
                           escaped(*c.failure), escaped(c.details));
        out += "    </testcase>\n";
      } else if (!c.details.empty()) {
        out += fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n",
                           escaped(c.details));
      } else {
        out += "/>\n";
      }
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

void write_junit(const std::filesystem::path& file, const std::vector<JUnitSuite>& suites) {
  scenario::write_file_atomically(file, junit_xml(suites));
}

}  // namespace tb::verdicts
