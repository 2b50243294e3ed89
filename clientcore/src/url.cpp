#include "twinbench/clientcore/url.hpp"

#include <charconv>
#include <string_view>

#include "twinbench/clientcore/resolver.hpp"

namespace tb {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Dotted decimal as inet_pton reads it: four parts of 1-3 digits, each at most 255, no leading 0.
bool is_ipv4_literal(std::string_view s) {
  int parts = 0;
  while (true) {
    std::size_t digits = 0;
    int value = 0;
    while (digits < s.size() && is_digit(s[digits])) value = value * 10 + (s[digits++] - '0');
    if (digits == 0 || digits > 3 || value > 255 || (digits > 1 && s[0] == '0')) return false;
    ++parts;
    s.remove_prefix(digits);
    if (s.empty()) return parts == 4;
    if (s[0] != '.' || parts == 4) return false;
    s.remove_prefix(1);
  }
}

// RFC 4291's text form, as inet_pton reads it: groups of 1-4 hex digits, one "::" at most for a
// run of zero groups, the last 32 bits possibly dotted decimal; then Asio's "%scope", if any.
bool is_ipv6_literal(std::string_view s) {
  if (const auto percent = s.find('%'); percent != std::string_view::npos)
    s = s.substr(0, percent);  // Asio takes any scope, an empty one too
  int groups = 0;
  bool compressed = false;
  if (s.starts_with("::")) {
    compressed = true;
    s.remove_prefix(2);
  } else if (s.starts_with(":")) {
    return false;
  }
  while (!s.empty()) {
    std::size_t n = 0;
    while (n < s.size() && is_hex_digit(s[n])) ++n;
    if (n < s.size() && s[n] == '.') {  // the last 32 bits, dotted
      if (!is_ipv4_literal(s)) return false;
      groups += 2;
      break;
    }
    if (n == 0 || n > 4) return false;
    ++groups;
    s.remove_prefix(n);
    if (s.empty()) break;
    if (s[0] != ':') return false;
    s.remove_prefix(1);
    if (!s.empty() && s[0] == ':') {
      if (compressed) return false;
      compressed = true;
      s.remove_prefix(1);
    } else if (s.empty()) {
      return false;  // a trailing single ':'
    }
  }
  return compressed ? groups <= 7 : groups == 8;
}

}  // namespace

// Hand-written: the only parser of addresses at hand is Asio's (or inet_pton), and this room
// includes neither I/O library nor socket header (tests/clientcore/sans_io_test.cpp).
bool is_ip_literal(const std::string& host) { return is_ipv4_literal(host) || is_ipv6_literal(host); }

std::optional<Url> parse_url(const std::string& text) {
  Url url;
  const auto scheme_end = text.find("://");
  if (scheme_end == std::string::npos) return std::nullopt;
  url.scheme = text.substr(0, scheme_end);
  if (url.scheme != "http" && url.scheme != "https") return std::nullopt;
  std::string rest = text.substr(scheme_end + 3);
  const auto path_start = rest.find('/');
  std::string authority = rest.substr(0, path_start);
  if (path_start != std::string::npos) url.target = rest.substr(path_start);
  url.port = url.tls() ? 443 : 80;
  std::string port_text;
  if (!authority.empty() && authority.front() == '[') {  // [IPv6]:port
    const auto close = authority.find(']');
    if (close == std::string::npos) return std::nullopt;
    url.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size()) {
      if (authority[close + 1] != ':') return std::nullopt;
      port_text = authority.substr(close + 2);
    }
  } else {
    const auto colon = authority.rfind(':');
    url.host = authority.substr(0, colon);
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (url.host.empty()) return std::nullopt;
  if (!port_text.empty()) {
    unsigned value = 0;
    auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
        value > 65535)
      return std::nullopt;
    url.port = static_cast<std::uint16_t>(value);
  }
  return url;
}

}  // namespace tb
