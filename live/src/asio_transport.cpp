#include "twinbench/live/asio_transport.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>

#include "twinbench/live/socket_options.hpp"

namespace tb::live {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kWriteChunk = 256 * 1024;

// A FIFO of bytes: append at the back, take from the front, compacting lazily.
class ByteQueue {
 public:
  std::size_t size() const { return data_.size() - head_; }
  bool empty() const { return size() == 0; }
  void append(const std::byte* p, std::size_t n) { data_.insert(data_.end(), p, p + n); }
  std::size_t take(std::byte* out, std::size_t max) {
    const std::size_t n = std::min(max, size());
    std::memcpy(out, data_.data() + head_, n);
    head_ += n;
    if (head_ == data_.size()) {
      clear();
    } else if (head_ >= kReadChunk && head_ >= data_.size() / 2) {
      data_.erase(data_.begin(), data_.begin() + static_cast<std::ptrdiff_t>(head_));
      head_ = 0;
    }
    return n;
  }
  void clear() {
    data_.clear();
    head_ = 0;
  }

 private:
  std::vector<std::byte> data_;
  std::size_t head_ = 0;
};

}  // namespace

// Shared between the polling side and handlers on the io thread. The socket, read_chunk and
// write_chunk are touched only on the io thread; everything else is guarded by `mutex`.
struct AsioTransport::State : std::enable_shared_from_this<AsioTransport::State> {
  State(asio::io_context& io, TransportOptions o) : socket(io), options(o) {}

  tcp::socket socket;
  const TransportOptions options;
  std::array<std::byte, kReadChunk> read_chunk{};
  std::vector<std::byte> write_chunk;

  mutable std::mutex mutex;
  bool started = false;  // connect() called
  bool connected = false;
  bool closed = false;  // close() called
  bool failed = false;
  bool eof = false;          // peer sent FIN
  bool reading = false;      // async_read_some in flight
  bool read_paused = false;  // receive buffer full; read_some resumes reading
  bool writing = false;      // async_write in flight
  bool write_posted = false;
  std::string error_text;
  ByteQueue received;
  ByteQueue to_send;
  std::size_t in_flight = 0;  // bytes of write_chunk not yet written

  void fail(const std::string& what, const boost::system::error_code& ec) {  // mutex held
    if (closed || failed) return;
    failed = true;
    error_text = what + ": " + ec.message();
    received.clear();
    to_send.clear();
  }

  void post(void (State::*op)()) {
    asio::post(socket.get_executor(), [self = shared_from_this(), op] { ((*self).*op)(); });
  }

  // --- io thread ---
  void start_read() {
    std::size_t space = 0;
    {
      std::lock_guard lock(mutex);
      if (reading || closed || failed || eof || !connected) return;
      space =
          options.receive_buffer_limit - std::min(options.receive_buffer_limit, received.size());
      if (space == 0) {
        read_paused = true;
        return;
      }
      reading = true;
    }
    socket.async_read_some(asio::buffer(read_chunk.data(), std::min(space, read_chunk.size())),
                           [self = shared_from_this()](boost::system::error_code ec,
                                                       std::size_t n) { self->on_read(ec, n); });
  }

  void on_read(const boost::system::error_code& ec, std::size_t n) {
    {
      std::lock_guard lock(mutex);
      reading = false;
      if (closed || failed) return;
      received.append(read_chunk.data(), n);
      if (ec == asio::error::eof) {
        eof = true;
      } else if (ec) {
        fail("read", ec);
      }
    }
    start_read();
  }

  void start_write() {
    {
      std::lock_guard lock(mutex);
      write_posted = false;
      if (writing || closed || failed || to_send.empty()) return;
      write_chunk.resize(std::min(kWriteChunk, to_send.size()));
      to_send.take(write_chunk.data(), write_chunk.size());
      in_flight = write_chunk.size();
      writing = true;
    }
    asio::async_write(socket, asio::buffer(write_chunk),
                      [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                        {
                          std::lock_guard lock(self->mutex);
                          self->writing = false;
                          self->in_flight = 0;
                          if (ec) self->fail("write", ec);
                        }
                        self->start_write();
                      });
  }

  void shut() {
    boost::system::error_code ignored;
    socket.close(ignored);  // cancels pending operations; their handlers see `closed`
  }
};

AsioTransport::AsioTransport(IoThread& io, TransportOptions options)
    : state_(std::make_shared<State>(io.context(), options)) {}

AsioTransport::~AsioTransport() { close(); }

void AsioTransport::connect(const Endpoint& to) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(to.address, ec);
  std::lock_guard lock(state_->mutex);
  if (state_->started || state_->closed) return;
  state_->started = true;
  if (ec) {
    state_->fail("bad address '" + to.address + "'", ec);
    return;
  }
  // No TCP_NODELAY: Godot's StreamPeerTCP leaves Nagle on, and its interaction with delayed ACKs
  // is part of what the bench measures.
  asio::post(state_->socket.get_executor(), [self = state_, ep = tcp::endpoint(address, to.port)] {
    if (!self->options.congestion_control.empty()) {
      std::lock_guard lock(self->mutex);
      boost::system::error_code open_ec;
      self->socket.open(ep.protocol(), open_ec);
      if (open_ec) return self->fail("open", open_ec);
      if (!set_congestion_control(self->socket.native_handle(), self->options.congestion_control))
        return self->fail("setsockopt(TCP_CONGESTION, " + self->options.congestion_control + ")",
                          boost::system::error_code(errno, boost::system::system_category()));
    }
    self->socket.async_connect(ep, [self](const boost::system::error_code& ec) {
      {
        std::lock_guard lock(self->mutex);
        if (self->closed || self->failed) return;
        if (ec) {
          self->fail("connect", ec);
          return;
        }
        self->connected = true;
      }
      self->start_read();
      self->start_write();
    });
  });
}

TransportStatus AsioTransport::status() {
  std::lock_guard lock(state_->mutex);
  const State& s = *state_;
  if (s.closed) return TransportStatus::kClosed;
  if (s.failed) return TransportStatus::kError;
  if (!s.started) return TransportStatus::kIdle;
  if (!s.connected) return TransportStatus::kConnecting;
  if (s.eof && s.received.empty()) return TransportStatus::kClosed;
  return TransportStatus::kConnected;
}

std::size_t AsioTransport::write_some(std::span<const std::byte> data) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  // Like a non-blocking socket, nothing is accepted before the connection is established.
  if (!s.connected || s.closed || s.failed) return 0;
  const std::size_t held = s.to_send.size() + s.in_flight;
  const std::size_t n = std::min(
      data.size(), s.options.send_buffer_limit - std::min(s.options.send_buffer_limit, held));
  if (n == 0) return 0;
  s.to_send.append(data.data(), n);
  if (!s.writing && !s.write_posted) {
    s.write_posted = true;
    s.post(&State::start_write);
  }
  return n;
}

ReadResult AsioTransport::read_some(std::span<std::byte> out) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (s.closed) return {ReadResult::Kind::kEof, 0};
  if (s.failed) return {ReadResult::Kind::kError, 0};
  if (s.received.empty()) {
    return {s.eof ? ReadResult::Kind::kEof : ReadResult::Kind::kWouldBlock, 0};
  }
  const std::size_t n = s.received.take(out.data(), out.size());
  if (s.read_paused && n > 0) {  // room again: let the io thread resume reading
    s.read_paused = false;
    s.post(&State::start_read);
  }
  return {ReadResult::Kind::kData, n};
}

std::size_t AsioTransport::available() { return buffered(); }

std::size_t AsioTransport::buffered() const {
  std::lock_guard lock(state_->mutex);
  return state_->received.size();
}

bool AsioTransport::peer_finished() const {
  std::lock_guard lock(state_->mutex);
  return state_->eof;
}

void AsioTransport::close() {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (s.closed) return;
  s.closed = true;
  s.received.clear();
  s.to_send.clear();
  if (s.started) s.post(&State::shut);
}

std::string AsioTransport::error() const {
  std::lock_guard lock(state_->mutex);
  return state_->error_text;
}

std::unique_ptr<Transport> AsioTransportFactory::create() {
  return std::make_unique<AsioTransport>(io_, options_);
}

}  // namespace tb::live
