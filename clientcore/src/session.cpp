#include "twinbench/clientcore/session.hpp"

namespace tb {

Session::Session(const Scheduler& clock, SessionOptions options)
    : clock_(clock), options_(options) {}

std::optional<Session::Lease> Session::acquire(const Key& key, TransportFactory& transports,
                                               Resolver& resolver,
                                               const HttpClientOptions& client_options) {
  Pool& pool = pools_[key];
  while (!pool.idle.empty()) {
    Idle entry = std::move(pool.idle.back());
    pool.idle.pop_back();
    if (clock_.now() - entry.since > options_.idle_timeout) continue;  // expired: dropped
    entry.client->poll();  // notices a connection the server closed while it idled
    if (entry.client->status() != HttpStatus::kConnected) continue;
    entry.client->set_read_chunk_size(client_options.read_chunk_size);
    ++pool.in_use;
    return Lease{std::move(entry.client), true};
  }
  if (pool.in_use + pool.idle.size() >= options_.max_per_host) return std::nullopt;
  ++pool.in_use;
  return Lease{std::make_unique<HttpClient>(transports, resolver, client_options), false};
}

void Session::release(const Key& key, std::unique_ptr<HttpClient> client) {
  Pool& pool = pools_[key];
  if (pool.in_use > 0) --pool.in_use;
  if (client && client->status() == HttpStatus::kConnected && client->response_keep_alive()) {
    pool.idle.push_back(Idle{std::move(client), clock_.now()});
  }
}

std::size_t Session::idle(const Key& key) const {
  auto it = pools_.find(key);
  return it == pools_.end() ? 0 : it->second.idle.size();
}

}  // namespace tb
