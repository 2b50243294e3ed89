#include "twinbench/live/asio_resolver.hpp"

#include <mutex>
#include <unordered_map>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

namespace tb::live {
namespace {
namespace asio = boost::asio;
using asio::ip::tcp;

struct Entry {
  Resolver::Status status = Resolver::Status::kWaiting;
  std::string address;
};
}  // namespace

// The tcp::resolver is used only on the io thread; `entries` is shared under `mutex`.
struct AsioResolver::State {
  explicit State(asio::io_context& io) : resolver(io) {}
  tcp::resolver resolver;
  std::mutex mutex;
  std::unordered_map<Id, Entry> entries;
  Id next_id = 1;
};

AsioResolver::AsioResolver(IoThread& io) : state_(std::make_shared<State>(io.context())) {}

AsioResolver::~AsioResolver() {
  asio::post(state_->resolver.get_executor(), [s = state_] { s->resolver.cancel(); });
}

Resolver::Id AsioResolver::start(const std::string& host) {
  std::lock_guard lock(state_->mutex);
  const Id id = state_->next_id++;
  Entry& entry = state_->entries[id];
  // A numeric literal needs no lookup (Godot connects to it directly). Checked here with Asio's
  // parser rather than tb::is_ip_literal so the live backend does not depend on its definition.
  boost::system::error_code ec;
  const auto literal = asio::ip::make_address(host, ec);
  if (!ec) {
    entry = {Status::kDone, literal.to_string()};
    return id;
  }
  asio::post(state_->resolver.get_executor(), [s = state_, id, host] {
    // No AI_ADDRCONFIG (Asio's default flag): on a loopback-only host it would hide "localhost".
    s->resolver.async_resolve(
        host, "", tcp::resolver::flags{},
        [s, id](const boost::system::error_code& ec, const tcp::resolver::results_type& results) {
          std::string chosen;
          for (const auto& r : results) {  // prefer IPv4, else the first address
            const auto a = r.endpoint().address();
            if (a.is_v4()) {
              chosen = a.to_string();
              break;
            }
            if (chosen.empty()) chosen = a.to_string();
          }
          std::lock_guard lock(s->mutex);
          const auto it = s->entries.find(id);
          if (it == s->entries.end()) return;  // forgotten meanwhile
          it->second =
              (ec || chosen.empty()) ? Entry{Status::kFailed, {}} : Entry{Status::kDone, chosen};
        });
  });
  return id;
}

Resolver::Status AsioResolver::status(Id id) {
  std::lock_guard lock(state_->mutex);
  const auto it = state_->entries.find(id);
  return it == state_->entries.end() ? Status::kFailed : it->second.status;
}

std::string AsioResolver::address(Id id) {
  std::lock_guard lock(state_->mutex);
  const auto it = state_->entries.find(id);
  return it == state_->entries.end() || it->second.status != Status::kDone ? std::string()
                                                                           : it->second.address;
}

void AsioResolver::forget(Id id) {
  std::lock_guard lock(state_->mutex);
  state_->entries.erase(id);
}

}  // namespace tb::live
