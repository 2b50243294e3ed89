#include "twinbench/clientcore/url.hpp"

#include <charconv>

#include <boost/asio/ip/address.hpp>

#include "twinbench/clientcore/resolver.hpp"

namespace tb {

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);  // parsing only: no I/O
  return !ec;
}

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
