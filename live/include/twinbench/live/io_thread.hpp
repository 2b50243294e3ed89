#pragma once
// The one background thread that runs every Asio operation of the live backend. The frame loop
// and model workers never touch a socket; they poll objects whose state this thread updates.
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

namespace tb::live {

class IoThread {
 public:
  IoThread();
  ~IoThread();  // stop() + join
  IoThread(const IoThread&) = delete;
  IoThread& operator=(const IoThread&) = delete;

  boost::asio::io_context& context() { return io_; }
  // Stops the context and joins the thread; idempotent. Objects using this thread (transports,
  // resolvers) must be destroyed before the IoThread itself.
  void stop();

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace tb::live
