// Responses are parsed with Beast's response_parser, one parser per response, fed straight from
// the caller's buffer; requests are stamped when taken, so a request's latency includes the time
// its bytes wait behind earlier ones in the socket and on the server.
#include "twinbench/loadbench/pipelined_exchange.hpp"

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include <algorithm>

namespace tb::loadbench {
namespace {

namespace http = boost::beast::http;

// A response body larger than this is a protocol error, whatever was expected: it bounds the
// memory one connection of the load generator can take.
constexpr std::uint64_t kMaxBodyBytes = 64ull << 20;

// A string body that refuses a declared length beyond kMaxBodyBytes before it reserves it: Beast's
// string_body reserves the whole Content-Length when the head ends, ahead of the parser's body
// limit, so a peer announcing a terabyte ran the load generator out of memory (found by
// pipelined_exchange_fuzz).
struct BoundedStringBody : http::string_body {
  class reader {
   public:
    template <bool isRequest, class Fields>
    reader(http::header<isRequest, Fields>& head, value_type& body) : inner_(head, body) {}
    void init(const boost::optional<std::uint64_t>& length, boost::beast::error_code& ec) {
      if (length && *length > kMaxBodyBytes) {
        ec = http::error::body_limit;
        return;
      }
      inner_.init(length, ec);
    }
    template <class ConstBufferSequence>
    std::size_t put(const ConstBufferSequence& buffers, boost::beast::error_code& ec) {
      return inner_.put(buffers, ec);
    }
    void finish(boost::beast::error_code& ec) { inner_.finish(ec); }

   private:
    http::string_body::reader inner_;
  };
};
using Response = http::response<BoundedStringBody>;

}  // namespace

std::string format_load_request(const std::string& method, const std::string& target,
                                const std::string& host, const std::string& body) {
  std::string head = method + " " + target + " HTTP/1.1\r\nHost: " + host + "\r\n";
  if (!body.empty() || method == "POST") {
    head += "Content-Type: application/octet-stream\r\nContent-Length: ";
    head += std::to_string(body.size());
    head += "\r\n";
  }
  return head + "\r\n" + body;
}

struct PipelinedExchange::Impl {
  using Parser = http::response_parser<BoundedStringBody>;

  std::shared_ptr<const std::vector<LoadRequest>> requests;
  std::size_t window;
  std::size_t next_request;
  struct Pending {
    const LoadRequest* request;
    Time sent;
  };
  std::deque<Pending> pending;
  std::optional<Parser> parser;
  std::string input;  // received bytes the parser has not taken yet (part of a head)
  std::string error;

  void end(std::string why) {
    if (error.empty()) error = std::move(why);
    parser.reset();
  }

  // Checks a complete response against its request; false (and ended) when it does not match.
  bool check(const Response& response, const LoadRequest& request) {
    if (response.result_int() != 200) {
      end("status " + std::to_string(response.result_int()));
      return false;
    }
    if (request.echoed_body && response.body() != *request.echoed_body) {
      end("echoed body differs from the request's (" + std::to_string(response.body().size()) +
          " bytes)");
      return false;
    }
    if (request.body_size && response.body().size() != *request.body_size) {
      end("body of " + std::to_string(response.body().size()) + " bytes, expected " +
          std::to_string(*request.body_size));
      return false;
    }
    return true;
  }

  // Feeds what the parser takes; returns the bytes used, with `complete` set at a response's end.
  std::size_t feed(std::span<const char> data, bool& complete) {
    if (!parser) {
      parser.emplace();
      parser->body_limit(kMaxBodyBytes);
      parser->eager(true);
    }
    boost::beast::error_code ec;
    const std::size_t used =
        parser->put(boost::beast::net::const_buffer(data.data(), data.size()), ec);
    complete = !ec && parser->is_done();
    if (ec && ec != http::error::need_more) end("malformed response: " + ec.message());
    return used;
  }

  void receive(std::span<const char> received, Time now, std::vector<Completion>& done) {
    if (!error.empty()) return;
    input.append(received.data(), received.size());
    std::span<const char> data(input);
    parse(data, now, done);
    input.erase(0, input.size() - data.size());
  }

  // Consumes from the front of `data` every byte the parser takes.
  void parse(std::span<const char>& data, Time now, std::vector<Completion>& done) {
    while (!data.empty() && error.empty()) {
      if (pending.empty()) {
        end("a response no request asked for");
        return;
      }
      bool complete = false;
      const std::size_t used = feed(data, complete);
      data = data.subspan(used);
      if (!error.empty()) return;
      if (!complete) {
        if (used == 0) return;  // a head needs more bytes: they stay in `input`
        continue;
      }
      const auto response = parser->release();
      parser.reset();
      const Pending answered = pending.front();
      pending.pop_front();
      if (!check(response, *answered.request)) return;
      done.push_back({answered.sent, now, response.body().size()});
      if (!response.keep_alive()) end("closed");
    }
  }
};

PipelinedExchange::PipelinedExchange(std::shared_ptr<const std::vector<LoadRequest>> requests,
                                     std::size_t window, std::size_t first)
    : impl_(std::make_unique<Impl>()) {
  impl_->requests = std::move(requests);
  impl_->window = std::max<std::size_t>(window, 1);
  impl_->next_request = impl_->requests->empty() ? 0 : first % impl_->requests->size();
}

PipelinedExchange::~PipelinedExchange() = default;
PipelinedExchange::PipelinedExchange(PipelinedExchange&&) noexcept = default;
PipelinedExchange& PipelinedExchange::operator=(PipelinedExchange&&) noexcept = default;

std::string PipelinedExchange::take_requests(Time now) {
  std::string out;
  auto& i = *impl_;
  if (!i.error.empty() || i.requests->empty()) return out;
  while (i.pending.size() < i.window) {
    const LoadRequest& request = (*i.requests)[i.next_request];
    i.next_request = (i.next_request + 1) % i.requests->size();
    out += request.bytes;
    i.pending.push_back({&request, now});
  }
  return out;
}

void PipelinedExchange::on_receive(std::span<const char> data, Time now,
                                   std::vector<Completion>& done) {
  impl_->receive(data, now, done);
}

std::size_t PipelinedExchange::outstanding() const { return impl_->pending.size(); }
bool PipelinedExchange::ended() const { return !impl_->error.empty(); }
const std::string& PipelinedExchange::error() const { return impl_->error; }

}  // namespace tb::loadbench
