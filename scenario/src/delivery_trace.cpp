#include "twinbench/scenario/delivery_trace.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "twinbench/scenario/scenario_file.hpp"
#include "twinbench/scenario/text.hpp"

namespace tb::scenario {

std::vector<std::uint32_t> parse_delivery_trace(std::string_view text, const std::string& origin) {
  std::vector<std::uint32_t> out;
  const auto fail = [&](std::size_t line, std::string_view expected, std::string_view got) {
    throw ScenarioError(fmt::format("{}:{}: expected {}, got {}", origin, line, expected, got));
  };
  std::size_t line = 0;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    std::string_view row = text.substr(at, end - at);
    at = end + 1;
    ++line;
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);  // CRLF files
    if (row.empty() && at >= text.size()) break;  // the newline that ends the last line
    std::uint32_t ms = 0;
    const auto [rest, error] = std::from_chars(row.data(), row.data() + row.size(), ms);
    if (row.empty() || error != std::errc() || rest != row.data() + row.size()) {
      fail(line, "a time in whole milliseconds (0 to 4294967295), one per line",
           fmt::format("\"{}\"", printable(row)));
    }
    if (!out.empty() && ms < out.back())
      fail(line,
           fmt::format("a time >= the line before's {} ms (times never decrease)", out.back()),
           fmt::format("{}", ms));
    if (out.size() == kMaxTraceOpportunities)
      fail(line, fmt::format("at most {} lines", kMaxTraceOpportunities), "more");
    out.push_back(ms);
  }
  if (out.empty()) fail(line, "at least one delivery opportunity", "an empty trace");
  if (out.back() == 0) fail(line, "a last time over 0 ms (the trace's period: it loops)", "0");
  return out;
}

std::vector<std::uint32_t> read_delivery_trace(const std::filesystem::path& file) {
  errno = 0;
  const auto text = read_file(file);
  if (!text)
    throw ScenarioError(fmt::format("{}: cannot open: {}", file.string(),
                                    errno ? std::strerror(errno) : "unknown error"));
  return parse_delivery_trace(*text, file.string());
}

double trace_mean_mbps(const std::vector<std::uint32_t>& opportunities_ms) {
  if (opportunities_ms.empty() || opportunities_ms.back() == 0) return 0;
  const double bits = static_cast<double>(opportunities_ms.size()) * kTraceOpportunityBytes * 8;
  return bits / (static_cast<double>(opportunities_ms.back()) * 1e3);
}

}  // namespace tb::scenario
