#include "twinbench/scenario/scenario_file.hpp"

#include "twinbench/scenario/delivery_trace.hpp"

#include "twinbench/scenario/profile.hpp"
#include "twinbench/scenario/text.hpp"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <fmt/format.h>

namespace tb::scenario {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::TextFormat;
using twinbench::Scenario;

constexpr std::string_view kDefaultPingPath = "/api/benchmark/ping/";
constexpr std::string_view kDefaultDownloadTemplate = "/api/benchmark/download/{bytes}/";
constexpr double kDefaultWorkerSleepMs = 1.0;
constexpr std::uint32_t kMaxClients = 1024;  // one client node's ephemeral ports and a sane run
constexpr std::uint32_t kMinChunk = 256;
constexpr std::uint32_t kMaxChunk = 16u << 20;

// Keeps the first error only: later ones are usually consequences of it.
class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstError(const std::string& origin) : origin_(origin) {}
  void AddError(int line, int column, const std::string& message) override {
    if (first_.empty())
      first_ = fmt::format("{}:{}:{}: {}", origin_, line + 1, column + 1, message);
  }
  void AddWarning(int, int, const std::string&) override {}
  const std::string& first() const { return first_; }

 private:
  const std::string& origin_;
  std::string first_;
};

// A field as named in error messages ("variants[2].name"), with the best line known for it.
struct Field {
  std::string name;
  int line;  // 1-based; -1 when unknown (scenarios built in code, or a missing field)
};

// A message inside the scenario and, when parsed from text, its part of the ParseInfoTree.
// Missing fields fall back to the line of the enclosing message, so errors still point somewhere.
struct Node {
  const Descriptor* type;
  const TextFormat::ParseInfoTree* tree;
  std::string path;
  int line;

  Field field(std::string_view name, int index = -1) const {
    const auto* fd = type->FindFieldByName(std::string(name));
    std::string full = path + std::string(name) + (index >= 0 ? fmt::format("[{}]", index) : "");
    if (tree == nullptr) return {std::move(full), line};
    // List syntax ("frame_caps: [0, 60]") records one location for all its values, so element i
    // may have none: use the closest recorded statement before it.
    for (int i = fd->is_repeated() ? std::max(index, 0) : -1;; --i) {
      const auto loc = tree->GetLocation(fd, i);
      if (loc.line >= 0) return {std::move(full), loc.line + 1};
      if (i <= 0) break;
    }
    return {std::move(full), line};
  }

  Node child(std::string_view name, int index = -1) const {
    const auto* fd = type->FindFieldByName(std::string(name));
    const Field f = field(name, index);
    const auto* nested =
        tree ? tree->GetTreeForNested(fd, fd->is_repeated() ? index : -1) : nullptr;
    return {fd->message_type(), nested, f.name + ".", f.line};
  }
};

class Checker {
 public:
  explicit Checker(const std::string& origin) : origin_(origin) {}

  [[noreturn]] void fail(const Field& f, std::string_view expected, std::string_view got) const {
    const std::string where = f.line >= 0 ? fmt::format("{}:{}", origin_, f.line) : origin_;
    throw ScenarioError(fmt::format("{}: {}: expected {}, got {}", where, f.name, expected, got));
  }
  void require(bool ok, const Field& f, std::string_view expected, std::string_view got) const {
    if (!ok) fail(f, expected, got);
  }

 private:
  const std::string& origin_;
};

std::string quoted(const std::string& s) { return fmt::format("\"{}\"", printable(s)); }

// An enum value's name, or its number when it has none (proto3 keeps unknown numbers).
template <class Enum>
std::string enum_text(Enum value) {
  const auto* known = google::protobuf::GetEnumDescriptor<Enum>()->FindValueByNumber(value);
  return known ? known->name() : std::to_string(static_cast<int>(value));
}

// Every string field, at any depth, holds UTF-8 (proto3 requires it; the reports are JSON).
void check_utf8(const Checker& check, const Node& node, const google::protobuf::Message& m) {
  const auto* reflection = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(m, &fields);
  for (const auto* fd : fields) {
    const int count = fd->is_repeated() ? reflection->FieldSize(m, fd) : 1;
    for (int i = 0; i < count; ++i) {
      const int index = fd->is_repeated() ? i : -1;
      if (fd->type() == google::protobuf::FieldDescriptor::TYPE_STRING) {
        const std::string s = fd->is_repeated() ? reflection->GetRepeatedString(m, fd, i)
                                                : reflection->GetString(m, fd);
        check.require(is_utf8(s), node.field(fd->name(), index), "UTF-8 text", quoted(s));
      } else if (fd->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
        check_utf8(check, node.child(fd->name(), index),
                   fd->is_repeated() ? reflection->GetRepeatedMessage(m, fd, i)
                                     : reflection->GetMessage(m, fd));
      }
    }
  }
}

bool is_identifier(const std::string& s, bool upper_and_punct) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
           (upper_and_punct && ((c >= 'A' && c <= 'Z') || c == '-' || c == '.'));
  });
}

template <class Repeated>
void check_unique(const Checker& check, const Node& node, std::string_view name,
                  const Repeated& values) {
  for (int i = 0; i < values.size(); ++i)
    for (int j = 0; j < i; ++j)
      if (values[i] == values[j])
        check.fail(node.field(name, i),
                   fmt::format("distinct values ({}[{}] is already {})", name, j, values[j]),
                   fmt::format("{}", values[i]));
}

void check_ms(const Checker& check, const Field& f, double v) {
  check.require(std::isfinite(v) && v >= 0, f, "a finite number of milliseconds >= 0",
                fmt::format("{}", v));
}

void check_tcp(const Checker& check, const Node& node, const twinbench::Tcp& tcp) {
  check.require(twinbench::CongestionControl_IsValid(tcp.congestion_control()),
                node.field("congestion_control"), "CUBIC, BBR or NEW_RENO",
                fmt::format("{}", static_cast<int>(tcp.congestion_control())));
  check.require(tcp.initial_cwnd_segments() <= 1000, node.field("initial_cwnd_segments"),
                "0 (default 10) to 1000 segments", fmt::format("{}", tcp.initial_cwnd_segments()));
  check_ms(check, node.field("delayed_ack_ms"), tcp.delayed_ack_ms());
  check_ms(check, node.field("min_rto_ms"), tcp.min_rto_ms());
  const auto check_buffer = [&](std::string_view name, std::uint64_t bytes) {
    check.require(bytes <= (1u << 30), node.field(name), "0 (default) to 1 GiB",
                  fmt::format("{}", bytes));
  };
  check_buffer("send_buffer_bytes", tcp.send_buffer_bytes());
  check_buffer("receive_buffer_bytes", tcp.receive_buffer_bytes());
}

// A delivery trace as read (load_traces) or written inline: times that never decrease, a last
// time over 0 (the period it loops with).
void check_trace(const Checker& check, const Node& link, std::string_view name, bool present,
                 const twinbench::DeliveryTrace& trace) {
  if (!present) return;
  const Node node = link.child(name);
  const auto& ms = trace.opportunities_ms();
  check.require(!ms.empty(), node.field(trace.file().empty() ? "opportunities_ms" : "file"),
                "a trace file or its opportunities_ms (at least one)",
                trace.file().empty() ? "neither" : quoted(trace.file()) + " with no lines");
  // The field (and its line) only on a failure: finding an element's line walks the list.
  for (int i = 1; i < ms.size(); ++i)
    if (ms[i] < ms[i - 1])
      check.fail(node.field("opportunities_ms", i),
                 fmt::format("a time >= opportunities_ms[{}] ({} ms)", i - 1, ms[i - 1]),
                 fmt::format("{}", ms[i]));
  if (ms[ms.size() - 1] == 0)
    check.fail(node.field("opportunities_ms", ms.size() - 1),
               "a last time over 0 ms (the trace's period: it loops)", "0");
}

// A schedule's steps in increasing time from 0, each value as `expected` says.
template <class Steps, class Valid>
void check_schedule(const Checker& check, const Node& link, std::string_view name,
                    const Steps& steps, std::string_view expected, Valid valid) {
  for (int i = 0; i < steps.size(); ++i) {
    const Node step = link.child(name, i);
    const double at = steps[i].at_ms();
    check.require(std::isfinite(at) && at >= 0, step.field("at_ms"),
                  "a time in ms >= 0 from the start of the run's first request",
                  fmt::format("{}", at));
    if (i > 0)
      check.require(at > steps[i - 1].at_ms(), step.field("at_ms"),
                    fmt::format("a time after {}[{}]'s {} ms", name, i - 1, steps[i - 1].at_ms()),
                    fmt::format("{}", at));
    check.require(valid(steps[i].value()), step.field("value"), expected,
                  fmt::format("{}", steps[i].value()));
  }
}

// The simulated network, when a scenario has one (live runs ignore it). Unset fields take the
// defaults of tb::scenario::resolve (docs/tcp-model.md), except the link rates, which have none.
void check_network(const Checker& check, const Node& node, const twinbench::Network& network) {
  const Node link = node.child("link");
  const auto& l = network.link();
  check_ms(check, link.field("client_to_server_delay_ms"), l.client_to_server_delay_ms());
  check_ms(check, link.field("server_to_client_delay_ms"), l.server_to_client_delay_ms());
  const auto check_rate = [&](std::string_view name, double mbps) {
    check.require(std::isfinite(mbps) && mbps > 0, link.field(name), "a rate in Mbit/s > 0",
                  fmt::format("{}", mbps));
  };
  // A direction with a delivery trace takes its rate from the trace.
  if (!l.has_downlink_trace()) check_rate("downlink_mbps", l.downlink_mbps());
  if (!l.has_uplink_trace()) check_rate("uplink_mbps", l.uplink_mbps());
  check_trace(check, link, "downlink_trace", l.has_downlink_trace(), l.downlink_trace());
  check_trace(check, link, "uplink_trace", l.has_uplink_trace(), l.uplink_trace());
  check_schedule(check, link, "client_to_server_delay_schedule",
                 l.client_to_server_delay_schedule(), "a delay in ms >= 0",
                 [](double v) { return std::isfinite(v) && v >= 0; });
  check_schedule(check, link, "server_to_client_delay_schedule",
                 l.server_to_client_delay_schedule(), "a delay in ms >= 0",
                 [](double v) { return std::isfinite(v) && v >= 0; });
  check_schedule(check, link, "loss_schedule", l.loss_schedule(), "a probability in [0, 1]",
                 [](double v) { return v >= 0 && v <= 1; });
  check.require(l.loss_rate() >= 0 && l.loss_rate() < 1, link.field("loss_rate"),
                "a probability in [0, 1)", fmt::format("{}", l.loss_rate()));
  check_ms(check, link.field("jitter_ms"), l.jitter_ms());
  check.require(l.mtu_bytes() == 0 || (l.mtu_bytes() >= 576 && l.mtu_bytes() <= 65535),
                link.field("mtu_bytes"), "0 (default 1500) or 576 to 65535 bytes",
                fmt::format("{}", l.mtu_bytes()));
  const double policer = l.downlink_policer_mbps();
  const std::uint64_t mtu = l.mtu_bytes() > 0 ? l.mtu_bytes() : 1500;
  check.require(std::isfinite(policer) && policer >= 0, link.field("downlink_policer_mbps"),
                "a rate in Mbit/s >= 0 (0: no policer)", fmt::format("{}", policer));
  // Without a policer the bucket is ignored (a sweep may turn the policer off and on).
  check.require(
      policer == 0 || l.downlink_policer_burst_bytes() >= mtu,
      link.field("downlink_policer_burst_bytes"),
      fmt::format("a bucket of at least one packet ({} bytes, the MTU) with a policer", mtu),
      fmt::format("{}", l.downlink_policer_burst_bytes()));
  check_tcp(check, node.child("client_tcp"), network.client_tcp());
  check_tcp(check, node.child("server_tcp"), network.server_tcp());
  check_ms(check, node.field("server_think_ms"), network.server_think_ms());
  check_ms(check, node.field("resolve_ms"), network.resolve_ms());
}

void check_tls(const Checker& check, const Node& node, const Scenario& s) {
  const auto& t = s.tls();
  const auto& url = s.target().base_url();
  check.require(url.empty() || url.starts_with("https://"), node.field("min_version"),
                "a tls section only with an https:// or empty target.base_url", quoted(url));
  const auto check_version = [&](std::string_view name, twinbench::TlsVersion v) {
    check.require(v == twinbench::TLS1_2 || v == twinbench::TLS1_3, node.field(name),
                  "TLS1_2 or TLS1_3", enum_text(v));
  };
  check_version("min_version", t.min_version());
  check_version("max_version", t.max_version());
  check.require(t.min_version() <= t.max_version(), node.field("max_version"),
                "a version >= min_version " + enum_text(t.min_version()),
                enum_text(t.max_version()));
  check.require(s.engine() != twinbench::GODOT3 || t.max_version() == twinbench::TLS1_2,
                node.field("max_version"),
                "TLS1_2 with engine GODOT3 (mbedTLS 2.16 has no TLS 1.3)",
                enum_text(t.max_version()));
  check.require(t.key_type() >= twinbench::RSA_2048 && t.key_type() <= twinbench::ECDSA_P256,
                node.field("key_type"), "RSA_2048, RSA_4096, ED25519 or ECDSA_P256",
                fmt::format("{}", static_cast<int>(t.key_type())));
  check.require(t.intermediates() <= 16, node.field("intermediates"), "0 to 16 certificates",
                fmt::format("{}", t.intermediates()));
  check.require(t.server_tickets() <= 16, node.field("server_tickets"), "0 to 16 tickets",
                fmt::format("{}", t.server_tickets()));
  check_ms(check, node.field("handshake_cpu_ms"), t.handshake_cpu_ms());
}

// Runs and warmups within bounds, alone and over every cell: a run's time and memory grow with
// its samples.
void check_rounds(const Checker& check, const Node& root, const Scenario& s) {
  const auto rounds = fmt::format("1 to {} rounds", kMaxRounds);
  check.require(s.runs() >= 1 && s.runs() <= kMaxRounds, root.field("runs"), rounds,
                fmt::format("{}", s.runs()));
  check.require(s.warmups() <= kMaxRounds, root.field("warmups"),
                fmt::format("0 to {} rounds", kMaxRounds), fmt::format("{}", s.warmups()));
  const std::uint64_t cells = static_cast<std::uint64_t>(s.variants_size()) *
                              static_cast<std::uint64_t>(s.frame_caps_size()) *
                              static_cast<std::uint64_t>(s.body_bytes_size());
  const std::uint64_t samples = cells * (std::uint64_t{s.runs()} + s.warmups());
  check.require(samples <= kMaxSamples, root.field("runs"),
                fmt::format("at most {} samples in all (cells x (runs + warmups))", kMaxSamples),
                fmt::format("{} cells x ({} + {}) = {}", cells, s.runs(), s.warmups(), samples));
}

// Each expectation selects cells the scenario has and bounds them with finite numbers.
void check_expectations(const Checker& check, const Node& root, const Scenario& s) {
  const auto listed = [](const auto& values, auto value) {
    return std::find(values.begin(), values.end(), value) != values.end();
  };
  for (int i = 0; i < s.expect_size(); ++i) {
    const auto& e = s.expect(i);
    const Node node = root.child("expect", i);
    for (int j = 0; j < e.variants_size(); ++j)
      check.require(std::any_of(s.variants().begin(), s.variants().end(),
                                [&](const auto& v) { return v.name() == e.variants(j); }),
                    node.field("variants", j), "the name of one of the scenario's variants",
                    quoted(e.variants(j)));
    for (int j = 0; j < e.frame_caps_size(); ++j)
      check.require(listed(s.frame_caps(), e.frame_caps(j)), node.field("frame_caps", j),
                    "one of the scenario's frame_caps", fmt::format("{}", e.frame_caps(j)));
    for (int j = 0; j < e.body_bytes_size(); ++j)
      check.require(listed(s.body_bytes(), e.body_bytes(j)), node.field("body_bytes", j),
                    "one of the scenario's body_bytes", fmt::format("{}", e.body_bytes(j)));
    check.require(twinbench::Expectation::Statistic_IsValid(e.statistic()), node.field("statistic"),
                  "MEDIAN, QUANTILE or MAX", enum_text(e.statistic()));
    if (e.statistic() == twinbench::Expectation::QUANTILE)
      check.require(e.has_quantile() && e.quantile() >= 0 && e.quantile() <= 1,
                    node.field("quantile"), "a quantile from 0 to 1 (with statistic QUANTILE)",
                    e.has_quantile() ? fmt::format("{}", e.quantile()) : "none");
    else
      check.require(
          !e.has_quantile(), node.field("quantile"), "no quantile unless statistic is QUANTILE",
          fmt::format("quantile {} with statistic {}", e.quantile(), enum_text(e.statistic())));
    check.require(e.has_max_ms() || e.has_max_frames(), node.field("max_ms"),
                  "a bound: max_ms, max_frames or both", "none");
    if (e.has_max_ms())
      check.require(std::isfinite(e.max_ms()) && e.max_ms() >= 0, node.field("max_ms"),
                    "a finite number of milliseconds >= 0", fmt::format("{}", e.max_ms()));
    if (e.has_max_frames())
      check.require(std::isfinite(e.max_frames()) && e.max_frames() >= 0, node.field("max_frames"),
                    "a finite number of frames >= 0", fmt::format("{}", e.max_frames()));
  }
}

// Checks a scenario whose defaults have been applied.
// Reads each delivery trace file the link names into its opportunities_ms; a relative path is
// relative to the scenario file's folder. An error in the trace names the trace's own line.
void load_traces(Scenario& s, const std::string& origin, const TextFormat::ParseInfoTree* tree) {
  if (!s.has_network() || !s.network().has_link()) return;
  const Checker check(origin);
  const Node link = Node{Scenario::descriptor(), tree, "", -1}.child("network").child("link");
  auto* l = s.mutable_network()->mutable_link();
  const std::pair<const char*, twinbench::DeliveryTrace*> traces[] = {
      {"downlink_trace", l->has_downlink_trace() ? l->mutable_downlink_trace() : nullptr},
      {"uplink_trace", l->has_uplink_trace() ? l->mutable_uplink_trace() : nullptr}};
  for (const auto& [name, trace] : traces) {
    if (trace == nullptr || trace->file().empty()) continue;
    const Node node = link.child(name);
    check.require(trace->opportunities_ms().empty(), node.field("opportunities_ms"),
                  "a trace file or its opportunities_ms, not both",
                  fmt::format("file {} and {} opportunities", quoted(trace->file()),
                              trace->opportunities_ms().size()));
    std::filesystem::path file(trace->file());
    if (file.is_relative()) file = std::filesystem::path(origin).parent_path() / file;
    try {
      const auto ms = read_delivery_trace(file);
      trace->mutable_opportunities_ms()->Assign(ms.begin(), ms.end());
    } catch (const ScenarioError& e) {
      const Field f = node.field("file");
      const std::string where = f.line >= 0 ? fmt::format("{}:{}", origin, f.line) : origin;
      throw ScenarioError(fmt::format("{}: {}: {}", where, f.name, e.what()));
    }
  }
}

void check(const Scenario& s, const std::string& origin, const TextFormat::ParseInfoTree* tree) {
  const Checker check(origin);
  const Node root{Scenario::descriptor(), tree, "", -1};

  check_utf8(check, root, s);
  check.require(is_identifier(s.name(), true), root.field("name"),
                "a non-empty name of letters, digits, '_', '-' or '.'", quoted(s.name()));
  check.require(s.engine() == twinbench::GODOT4 || s.engine() == twinbench::GODOT3,
                root.field("engine"), "GODOT4 or GODOT3", enum_text(s.engine()));

  check.require(s.variants_size() > 0, root.field("variants"), "at least one variant", "none");
  for (int i = 0; i < s.variants_size(); ++i) {
    const auto& v = s.variants(i);
    const Node node = root.child("variants", i);
    check.require(is_identifier(v.name(), false), node.field("name"),
                  "a non-empty name matching [a-z0-9_]+", quoted(v.name()));
    for (int j = 0; j < i; ++j)
      if (s.variants(j).name() == v.name())
        check.fail(node.field("name"),
                   fmt::format("a unique variant name (variants[{}] is also named so)", j),
                   quoted(v.name()));
    check.require(v.client() == twinbench::HTTP_REQUEST || v.client() == twinbench::C3HTTP,
                  node.field("client"), "HTTP_REQUEST or C3HTTP", enum_text(v.client()));
    check.require(!v.session() || v.client() == twinbench::C3HTTP, node.field("session"),
                  "session only with client C3HTTP (HTTPRequest has no session pool)",
                  "session: true with client " + enum_text(v.client()));
  }

  check.require(s.frame_caps_size() > 0, root.field("frame_caps"),
                "at least one frame cap (0 = uncapped)", "none");
  for (int i = 0; i < s.frame_caps_size(); ++i)
    check.require(s.frame_caps(i) <= kMaxFrameCap, root.field("frame_caps", i),
                  fmt::format("a frame cap from 0 (uncapped) to {} fps", kMaxFrameCap),
                  fmt::format("{}", s.frame_caps(i)));
  check_unique(check, root, "frame_caps", s.frame_caps());
  check.require(s.body_bytes_size() > 0, root.field("body_bytes"),
                "at least one body size (0 = ping)", "none");
  for (int i = 0; i < s.body_bytes_size(); ++i)
    check.require(s.body_bytes(i) <= kMaxBodyBytes, root.field("body_bytes", i),
                  "a body size from 0 (ping) to 16 GiB", fmt::format("{}", s.body_bytes(i)));
  check_unique(check, root, "body_bytes", s.body_bytes());
  check_rounds(check, root, s);
  check.require(s.download_chunk_size() >= kMinChunk && s.download_chunk_size() <= kMaxChunk,
                root.field("download_chunk_size"),
                fmt::format("{} to {} bytes", kMinChunk, kMaxChunk),
                fmt::format("{}", s.download_chunk_size()));
  check.require(!s.has_clients() || (s.clients() >= 1 && s.clients() <= kMaxClients),
                root.field("clients"), fmt::format("1 to {} clients", kMaxClients),
                fmt::format("{}", s.clients()));
  check.require(twinbench::RequestStart_IsValid(s.request_start()), root.field("request_start"),
                "AFTER_COMPLETION or NEXT_PROCESS_FRAME", enum_text(s.request_start()));
  check.require(
      s.session_scope() == twinbench::PER_FRAME_CAP || s.session_scope() == twinbench::PER_SCENARIO,
      root.field("session_scope"), "PER_FRAME_CAP or PER_SCENARIO", enum_text(s.session_scope()));

  const Node target = root.child("target");
  const auto& url = s.target().base_url();
  check.require(url.empty() || url.starts_with("http://") || url.starts_with("https://"),
                target.field("base_url"), "empty or a URL starting with http:// or https://",
                quoted(url));
  check.require(s.target().ping_path().starts_with('/'), target.field("ping_path"),
                "a path starting with '/'", quoted(s.target().ping_path()));
  const auto& tmpl = s.target().download_path_template();
  check.require(tmpl.starts_with('/') && tmpl.find("{bytes}") != std::string::npos,
                target.field("download_path_template"),
                "a path starting with '/' and containing \"{bytes}\"", quoted(tmpl));

  const Node loop = root.child("frame_loop");
  check_ms(check, loop.field("frame_work_ms"), s.frame_loop().frame_work_ms());
  check_ms(check, loop.field("http_request_worker_sleep_ms"),
           s.frame_loop().http_request_worker_sleep_ms());
  check_ms(check, loop.field("c3http_worker_sleep_ms"), s.frame_loop().c3http_worker_sleep_ms());

  if (s.has_network()) check_network(check, root.child("network"), s.network());
  if (s.has_tls()) check_tls(check, root.child("tls"), s);
  check_expectations(check, root, s);
}

}  // namespace

void apply_defaults(Scenario& s) {
  if (s.engine() == twinbench::ENGINE_PROFILE_UNSPECIFIED) s.set_engine(twinbench::GODOT4);
  if (s.download_chunk_size() == 0)
    s.set_download_chunk_size(s.engine() == twinbench::GODOT3 ? 4096 : 65536);
  if (s.session_scope() == twinbench::SESSION_SCOPE_UNSPECIFIED)
    s.set_session_scope(twinbench::PER_SCENARIO);
  auto& target = *s.mutable_target();
  if (target.ping_path().empty()) target.set_ping_path(std::string(kDefaultPingPath));
  if (target.download_path_template().empty())
    target.set_download_path_template(std::string(kDefaultDownloadTemplate));
  if (s.has_tls() || s.target().base_url().starts_with("https://")) {
    auto& tls = *s.mutable_tls();
    if (tls.min_version() == twinbench::TLS_VERSION_UNSPECIFIED)
      tls.set_min_version(twinbench::TLS1_2);
    if (tls.max_version() == twinbench::TLS_VERSION_UNSPECIFIED)
      tls.set_max_version(s.engine() == twinbench::GODOT3 ? twinbench::TLS1_2 : twinbench::TLS1_3);
    if (tls.key_type() == twinbench::KEY_TYPE_UNSPECIFIED) tls.set_key_type(twinbench::RSA_2048);
  }
  auto& loop = *s.mutable_frame_loop();
  if (!loop.has_http_request_worker_sleep_ms())
    loop.set_http_request_worker_sleep_ms(kDefaultWorkerSleepMs);
  if (!loop.has_c3http_worker_sleep_ms()) loop.set_c3http_worker_sleep_ms(kDefaultWorkerSleepMs);
}

void validate_scenario(const Scenario& scenario, const std::string& origin) {
  Scenario copy = scenario;
  apply_defaults(copy);
  check(copy, origin, nullptr);
}

void parse_textproto(std::string_view text, const std::string& origin,
                     google::protobuf::Message& message, TextFormat::ParseInfoTree* tree) {
  if (text.size() > static_cast<std::size_t>(INT_MAX))
    throw ScenarioError(origin + ": file too large");
  FirstError errors(origin);
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(tree);
  google::protobuf::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  if (!parser.Parse(&input, &message))
    throw ScenarioError(errors.first().empty() ? origin + ": cannot parse" : errors.first());
}

namespace {

// The text parsed, with each field's location; throws the parser's first error.
Scenario parse_text(std::string_view text, const std::string& origin,
                    TextFormat::ParseInfoTree& tree) {
  Scenario s;
  parse_textproto(text, origin, s, &tree);
  return s;
}

}  // namespace

Scenario parse_scenario(std::string_view text, const std::string& origin) {
  TextFormat::ParseInfoTree tree;
  Scenario s = parse_text(text, origin, tree);
  load_traces(s, origin, &tree);
  apply_defaults(s);
  check(s, origin, &tree);
  return s;
}

Scenario parse_profile(const std::string& text, const std::string& origin) {
  TextFormat::ParseInfoTree tree;
  Scenario profile = parse_text(text, origin, tree);
  if (profile.name().empty())
    throw ScenarioError(origin + ": name: expected the profile's name, got none");
  // What a profile lays over a scenario is checked as part of one, with the profile's lines: the
  // cells, which a profile does not have, are stand-ins that pass.
  Scenario checked = profile;
  if (checked.variants_size() == 0) checked.add_variants()->set_client(twinbench::HTTP_REQUEST);
  if (checked.variants(0).name().empty()) checked.mutable_variants(0)->set_name("profile");
  if (checked.frame_caps_size() == 0) checked.add_frame_caps(60);
  if (checked.body_bytes_size() == 0) checked.add_body_bytes(0);
  if (checked.runs() == 0) checked.set_runs(1);
  apply_defaults(checked);
  check(checked, origin, &tree);
  return profile;
}

int field_line(std::string_view text, std::string_view field, int index) {
  TextFormat::ParseInfoTree tree;
  try {
    parse_text(text, "", tree);
  } catch (const ScenarioError&) {
    return -1;
  }
  const auto* fd = Scenario::descriptor()->FindFieldByName(std::string(field));
  if (fd == nullptr) return -1;
  const int line = tree.GetLocation(fd, index).line;
  return line >= 0 ? line + 1 : -1;
}

Scenario load_scenario(const std::filesystem::path& file) {
  errno = 0;
  const auto text = read_file(file);
  if (!text) {
    throw ScenarioError(fmt::format("{}: cannot open: {}", file.string(),
                                    errno ? std::strerror(errno) : "unknown error"));
  }
  return parse_scenario(*text, file.string());
}

std::string target_path(const Scenario& scenario, std::uint64_t body_bytes) {
  const auto& t = scenario.target();
  if (body_bytes == 0) return t.ping_path().empty() ? std::string(kDefaultPingPath) : t.ping_path();
  std::string path = t.download_path_template().empty() ? std::string(kDefaultDownloadTemplate)
                                                        : t.download_path_template();
  const std::string bytes = std::to_string(body_bytes);
  for (auto at = path.find("{bytes}"); at != std::string::npos;
       at = path.find("{bytes}", at + bytes.size()))
    path.replace(at, 7, bytes);
  return path;
}

}  // namespace tb::scenario
