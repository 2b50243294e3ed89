#include "junit_schema.hpp"

#include <cstdio>

namespace tb::testing {

std::string junit_schema_errors(const std::filesystem::path& file) {
  const std::string command = "xmllint --noout --schema '" TWINBENCH_SOURCE_DIR
                              "/tests/inputs/junit.xsd' '" +
                              file.string() + "' 2>&1";
  std::string output;
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return "cannot start xmllint";
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, p)) output += buffer;
  const int status = ::pclose(p);
  if (status == 0) return {};
  return output.empty() ? "xmllint failed without a message (is libxml2-utils installed?)" : output;
}

}  // namespace tb::testing
