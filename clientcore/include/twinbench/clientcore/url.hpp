#pragma once
// The few URL parts a request needs. Boost.URL would do this but needs Boost >= 1.81 (Debian 12
// ships 1.74), so this is a deliberately small parser for scheme://host[:port][/path].
#include <cstdint>
#include <optional>
#include <string>

namespace tb {

struct Url {
  std::string scheme;  // "http" or "https"
  std::string host;    // without brackets for IPv6
  std::uint16_t port = 0;
  std::string target = "/";  // path and query
  bool tls() const { return scheme == "https"; }
};

// nullopt when `text` is not an absolute http(s) URL with a host.
std::optional<Url> parse_url(const std::string& text);

}  // namespace tb
