#pragma once
// Packet-delivery traces in Mahimahi's format (mm-link; docs/scenarios.md, "Links that change over
// time"): one line per delivery opportunity, the time in whole milliseconds from the trace's
// start, non-decreasing; n lines with the same time are n opportunities in that millisecond. Each
// opportunity delivers up to kTraceOpportunityBytes bytes. The trace loops with its last time as
// its period, so that time must be over zero.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tb::scenario {

// Mahimahi's PACKET_SIZE: a 1500-byte IP packet plus the TUN device's 4-byte header. A packet
// here costs its IP bytes plus the 2-byte link header of the constant link, so one full-size
// packet per opportunity, as in Mahimahi.
inline constexpr std::uint32_t kTraceOpportunityBytes = 1504;
// A bound on what a trace file may hold (lines), so a wrong file is refused, not swallowed.
inline constexpr std::size_t kMaxTraceOpportunities = 50'000'000;

// Parses a trace's text. Throws ScenarioError "ORIGIN:LINE: expected ..., got ..." on a line that
// is not a whole number of ms, a time earlier than the line before, an empty trace or one whose
// last time is 0.
std::vector<std::uint32_t> parse_delivery_trace(std::string_view text, const std::string& origin);

// Reads and parses a trace file (ScenarioError naming the file when it cannot be read).
std::vector<std::uint32_t> read_delivery_trace(const std::filesystem::path& file);

// The trace's mean rate in Mbit/s: its opportunities' bytes over its period.
double trace_mean_mbps(const std::vector<std::uint32_t>& opportunities_ms);

}  // namespace tb::scenario
