#pragma once
// C3Http's Session: a keep-alive pool of HTTP clients keyed by host, port and TLS options, with
// at most `max_per_host` connections per key and an idle timeout. Only a client that is still
// CONNECTED after a poll is reused; responses with `Connection: close` are never pooled.
// Main-thread only (threaded C3 requests acquire and release on the main thread).
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "twinbench/clientcore/http_client.hpp"
#include "twinbench/clientcore/scheduler.hpp"

namespace tb {

struct SessionOptions {
  std::size_t max_per_host = 6;
  Duration idle_timeout = std::chrono::seconds(60);
};

class Session {
 public:
  struct Key {
    std::string host;
    std::uint16_t port = 0;
    bool tls = false;
    auto operator<=>(const Key&) const = default;
  };
  struct Lease {
    std::unique_ptr<HttpClient> client;
    bool reused = false;
  };

  Session(const Scheduler& clock, SessionOptions options = {});
  // A pooled CONNECTED client, else a new unconnected one; nullopt when the key already has
  // max_per_host connections in use (the caller waits and tries again).
  std::optional<Lease> acquire(const Key& key, TransportFactory& transports, Resolver& resolver,
                               const HttpClientOptions& client_options);
  // Gives a client back: pooled when it is CONNECTED and its response allowed keep-alive.
  void release(const Key& key, std::unique_ptr<HttpClient> client);
  std::size_t idle(const Key& key) const;

 private:
  struct Idle {
    std::unique_ptr<HttpClient> client;
    Time since;
  };
  struct Pool {
    std::vector<Idle> idle;  // most recently released last
    std::size_t in_use = 0;
  };
  const Scheduler& clock_;
  SessionOptions options_;
  std::map<Key, Pool> pools_;
};

}  // namespace tb
