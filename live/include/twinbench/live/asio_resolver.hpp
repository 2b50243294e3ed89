#pragma once
// tb::Resolver over Asio's asynchronous getaddrinfo, polled like Godot's IP resolve queue.
#include <memory>
#include <string>

#include "twinbench/clientcore/resolver.hpp"
#include "twinbench/live/io_thread.hpp"

namespace tb::live {

class AsioResolver final : public Resolver {
 public:
  explicit AsioResolver(IoThread& io);
  ~AsioResolver() override;  // cancels lookups in flight

  // IP literals are kDone at once; names resolve on the IoThread, preferring IPv4.
  Id start(const std::string& host) override;
  Status status(Id id) override;
  std::string address(Id id) override;  // "" unless kDone
  void forget(Id id) override;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace tb::live
