// How fast the simulated backend simulates: CPU time (and wall time, and ns-3 events) of a download
// through the whole twinbench stack (frame loop, client model, HTTP client and server cores,
// Linux-like TCP over ns-3) against a bare ns-3 BulkSend of the same bytes over the same link and
// congestion control, measured in the same run. Three paths: a plain one (HTTP, CUBIC), the one
// `reproduce` simulates (the lightsail-2026 profile: HTTPS, BBR with pacing), so the cost per byte
// is shown where it matters, and that profile's link and TCP over plain HTTP (its cost without
// TLS). BulkSend runs twice: with ns-3's own TCP and object code (the baseline; still on
// twinbench's link, allocator and event loop), and with twinbench's stand-ins for ns-3 functions
// on (ns3_fast_paths/), which shows how much of the difference they make.
//
//   build/default/bench/sim_throughput [repetitions]   (runs per size: repetitions x 32 / MiB)
//   build/default/bench/sim_throughput --only plain|profile|profile-http MiB count
//                                      [--bulk-send|--bulk-send-fast]
//       only twinbench's downloads (or with the flag BulkSend's), `count` of them, and no table:
//       a workload to profile, as in
//       perf record -g build/default/bench/sim_throughput --only plain 1 500
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <map>
#include <string>

#include <ns3/boolean.h>
#include <ns3/bulk-send-helper.h>
#include <ns3/config.h>
#include <ns3/inet-socket-address.h>
#include <ns3/ipv4.h>
#include <ns3/packet-sink-helper.h>
#include <ns3/packet-sink.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include "twinbench/studies/reproduce.hpp"
#include "twinbench/ns3_fast_paths/fast_paths.hpp"
#include "twinbench/sim/ns_scheduler.hpp"
#include "twinbench/sim/run_simulated.hpp"
#include "twinbench/sim/sim_network.hpp"
#include "twinbench/scenario/scenario_file.hpp"

namespace {

using Clock = std::chrono::steady_clock;

// A download of `bytes` by C3Http at 60 fps, which reads everything that arrived every frame, so
// the frame cap does not gate the transfer.
twinbench::Scenario download(std::uint64_t bytes) {
  return tb::scenario::parse_scenario(R"(
      name: "bench"
      variants { name: "c3_coop" client: C3HTTP }
      frame_caps: [60]
      body_bytes: [)" + std::to_string(bytes) +
                                          R"(]
      runs: 1
      download_to_file: true
  )",
                                      "bench");
}

struct BenchPath {
  const char* title;
  std::function<void(twinbench::Scenario&)> lay_over;  // sets the scenario's network (and TLS)
  const char* ns3_congestion_control;                  // BulkSend's, the same as the server's
  bool pacing;
};

const BenchPath kPlainPath{"20 ms each way, 1 Gbit/s down, 100 Mbit/s up, HTTP, CUBIC",
                           [](twinbench::Scenario& s) {
                             auto& link = *s.mutable_network()->mutable_link();
                             link.set_client_to_server_delay_ms(20);
                             link.set_server_to_client_delay_ms(20);
                             link.set_downlink_mbps(1000);
                             link.set_uplink_mbps(100);
                           },
                           "ns3::TcpCubic", false};

const BenchPath kProfilePath{
    "the lightsail-2026 profile (what reproduce simulates): HTTPS, BBR with pacing, its link",
    [](twinbench::Scenario& s) {
      static const auto profile = tb::studies::load_profile("lightsail-2026");  // parsed once
      tb::studies::apply_profile(s, profile);
    },
    "ns3::TcpBbr", true};

// The same link and TCP over plain HTTP: what the HTTPS path costs without TLS, measured rather
// than estimated.
const BenchPath kProfileWithoutTlsPath{
    "the lightsail-2026 profile's link and TCP (BBR with pacing) over plain HTTP: the row above "
    "without TLS",
    [](twinbench::Scenario& s) {
      kProfilePath.lay_over(s);
      s.clear_tls();
      s.mutable_target()->set_base_url("http://lightsail.test");
    },
    "ns3::TcpBbr", true};

twinbench::Scenario scenario_for(const BenchPath& path, std::uint64_t bytes) {
  auto s = download(bytes);
  path.lay_over(s);
  return s;
}

// What one simulated download cost: this process's CPU seconds (the figure compared: it does not
// move with other work on the machine as wall time does), wall seconds, and ns-3 events executed.
struct Cost {
  double cpu = 0;
  double wall = 0;
  std::uint64_t events = 0;
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

template <typename F>
Cost measure(F&& simulate) {
  const auto wall_start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  const std::uint64_t events_start = tb::sim::events_executed_in_process();
  simulate();
  return {process_cpu_seconds() - cpu_start,
          std::chrono::duration<double>(Clock::now() - wall_start).count(),
          tb::sim::events_executed_in_process() - events_start};
}

Cost twinbench_download(const BenchPath& path, std::uint64_t bytes) {
  const auto s = scenario_for(path, bytes);
  tb::runner::RunOptions options;
  twinbench::ResultSet results;
  const Cost cost = measure([&] { results = tb::sim::run_simulated(s, options, 1); });
  if (results.samples(0).result() != "success") {
    std::fprintf(stderr, "twinbench download failed: %s\n", results.samples(0).error().c_str());
    std::exit(1);
  }
  return cost;
}

void simulate_bulk_send(const BenchPath& path, std::uint64_t bytes) {
  const auto s = scenario_for(path, bytes);
  tb::sim::SimulationScope scope(1);
  // ns-3's own sockets, given the same segment size, buffers and initial window as twinbench's.
  ns3::Config::SetDefault("ns3::TcpSocket::SegmentSize", ns3::UintegerValue(1448));
  ns3::Config::SetDefault("ns3::TcpSocket::SndBufSize", ns3::UintegerValue(4 << 20));
  ns3::Config::SetDefault("ns3::TcpSocket::RcvBufSize", ns3::UintegerValue(6 << 20));
  ns3::Config::SetDefault("ns3::TcpSocket::InitialCwnd", ns3::UintegerValue(10));
  ns3::Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                          ns3::TypeIdValue(ns3::TypeId::LookupByName(path.ns3_congestion_control)));
  ns3::Config::SetDefault("ns3::TcpSocketState::EnablePacing", ns3::BooleanValue(path.pacing));
  tb::sim::SimNetwork network(s.network(), 1);
  const std::uint16_t port = 9000;
  ns3::PacketSinkHelper sink("ns3::TcpSocketFactory",
                             ns3::InetSocketAddress(ns3::Ipv4Address::GetAny(), port));
  auto sink_apps = sink.Install(network.client_node());
  const auto client_ip = network.client_node()->GetObject<ns3::Ipv4>()->GetAddress(1, 0).GetLocal();
  ns3::BulkSendHelper sender("ns3::TcpSocketFactory", ns3::InetSocketAddress(client_ip, port));
  sender.SetAttribute("MaxBytes", ns3::UintegerValue(bytes));
  sender.Install(network.server_node());
  auto app = ns3::DynamicCast<ns3::PacketSink>(sink_apps.Get(0));
  // Stopped by the sink when the last byte arrives, as twinbench's runs stop when their script
  // goes idle: neither pays for a poll.
  app->TraceConnectWithoutContext(
      "Rx", ns3::MakeCallback(+[](ns3::PacketSink* sink, std::uint64_t bytes,
                                  ns3::Ptr<const ns3::Packet>, const ns3::Address&) {
              if (sink->GetTotalRx() >= bytes) ns3::Simulator::Stop();
            }).Bind(ns3::PeekPointer(app), bytes));
  tb::sim::NsScheduler scheduler;
  if (!scheduler.run_until([&] { return app->GetTotalRx() >= bytes; }, std::chrono::seconds(600),
                           tb::Duration::zero())) {
    std::fprintf(stderr, "BulkSend did not finish\n");
    std::exit(1);
  }
}

Cost bulk_send(const BenchPath& path, std::uint64_t bytes, bool fast_paths) {
  const tb::ns3_fast_paths::ScopedNs3FastPaths setting(fast_paths);
  return measure([&] { simulate_bulk_send(path, bytes); });
}

// The least disturbed of a few runs, by CPU time.
void keep_least(Cost& best, const Cost& c) {
  if (c.cpu < best.cpu) best = c;
}

// One table per path: per body size, each side's CPU and wall seconds, simulated MiB per CPU
// second, ns-3 events and events per CPU second; the rate ratios; and the 32 MiB / 8 MiB ratios.
void bench(const BenchPath& path, int repetitions) {
  std::printf("### %s\n\n", path.title);
  std::printf(
      "| body | twinbench CPU s (wall) | MiB per CPU s | events | events per CPU s "
      "| BulkSend CPU s (wall) | MiB per CPU s | events | events per CPU s "
      "| rate vs BulkSend: median (range) of blocks "
      "| BulkSend with the fast paths: CPU s (wall) | rate vs that |\n");
  std::printf("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  struct CpuSeconds {
    double ours, bulk_send, bulk_send_fast;
  };
  std::map<std::uint64_t, CpuSeconds> cpu;  // by MiB
  twinbench_download(path, 1024);  // one-time costs out of the figures: the TLS test credentials
  for (std::uint64_t mib : {1, 8, 32}) {
    const std::uint64_t bytes = mib << 20;
    // As many runs of a size as make the same bytes: the least of a few 10 ms runs moves more
    // with the machine's other work than the least of a few 300 ms ones.
    const int runs = repetitions * static_cast<int>(32 / mib);
    // The three take turns in blocks (at most 8 per size): within a block each runs warm, as a
    // program simulating one download after another does, and each block's ratio compares runs
    // made within a second or so of each other. This machine's speed drifts by tens of percent
    // over a minute (a virtual machine's host), which moves whole blocks; the median of the
    // blocks' ratios is what such drift leaves alone, where the ratio of overall least times
    // follows whichever side happened to run in the fastest second.
    Cost ours{1e300, 1e300, 0}, bare = ours, fast = ours;
    std::vector<double> vs_bare, vs_fast;  // per block: its least BulkSend CPU over its least ours
    const int block = (runs + 7) / 8;
    for (int done = 0, turn = 0; done < runs; done += block, ++turn) {
      const int n = std::min(block, runs - done);
      Cost o{1e300, 1e300, 0}, b = o, f = o;
      // Who goes first changes from block to block, so no side always follows a given other.
      for (int k = 0; k < 3; ++k) {
        const int side = (turn + k) % 3;
        for (int i = 0; i < n; ++i) {
          if (side == 0) keep_least(o, twinbench_download(path, bytes));
          if (side == 1) keep_least(b, bulk_send(path, bytes, false));
          if (side == 2) keep_least(f, bulk_send(path, bytes, true));
        }
      }
      vs_bare.push_back(b.cpu / o.cpu);
      vs_fast.push_back(f.cpu / o.cpu);
      keep_least(ours, o);
      keep_least(bare, b);
      keep_least(fast, f);
    }
    const auto row = [mib](const Cost& c) {
      std::printf(" %.3f (%.3f) | %.1f | %llu | %.0f |", c.cpu, c.wall,
                  static_cast<double>(mib) / c.cpu, static_cast<unsigned long long>(c.events),
                  static_cast<double>(c.events) / c.cpu);
    };
    std::printf("| %2llu MiB |", static_cast<unsigned long long>(mib));
    row(ours);
    row(bare);
    const auto ratio = [](std::vector<double> r) {  // median (least-most) of the blocks
      std::sort(r.begin(), r.end());
      const std::size_t n = r.size();
      const double median = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
      std::printf(" %.2fx (%.2f-%.2f) |", median, r.front(), r.back());
    };
    ratio(vs_bare);
    std::printf(" %.3f (%.3f) |", fast.cpu, fast.wall);
    ratio(vs_fast);
    std::printf("\n");
    std::fflush(stdout);
    cpu[mib] = {ours.cpu, bare.cpu, fast.cpu};
  }
  // A cost linear in the bytes makes this 4.
  std::printf(
      "\n32 MiB / 8 MiB CPU time: twinbench %.1fx, BulkSend %.1fx, BulkSend with the fast paths "
      "%.1fx (linear: 4x)\n\n",
      cpu[32].ours / cpu[8].ours, cpu[32].bulk_send / cpu[8].bulk_send,
      cpu[32].bulk_send_fast / cpu[8].bulk_send_fast);
  std::fflush(stdout);
}

// `text` as a whole number in [low, high], or -1.
long long whole_number(const char* text, long long low, long long high) {
  char* end = nullptr;
  const long long n = std::strtoll(text, &end, 10);
  return end != text && *end == '\0' && n >= low && n <= high ? n : -1;
}

}  // namespace

int main(int argc, char** argv) {
  // --only PATH MiB COUNT [--bulk-send|--bulk-send-fast]: one kind of download COUNT times, for
  // profilers (perf, callgrind); with the flag, the BulkSend baseline (without or with the fast
  // paths) instead of twinbench.
  const std::string baseline = argc == 6 ? argv[5] : "";
  if ((argc == 5 || (argc == 6 && (baseline == "--bulk-send" || baseline == "--bulk-send-fast"))) &&
      std::string(argv[1]) == "--only") {
    const std::string which = argv[2];
    const std::map<std::string, const BenchPath*> paths{{"plain", &kPlainPath},
                                                        {"profile", &kProfilePath},
                                                        {"profile-http", &kProfileWithoutTlsPath}};
    const auto it = paths.find(which);
    if (it == paths.end()) {
      std::fprintf(stderr, "--only: expected plain, profile or profile-http, got %s\n",
                   which.c_str());
      return 2;
    }
    const BenchPath& path = *it->second;
    const long long mib = whole_number(argv[3], 1, 1024);
    const long long count = whole_number(argv[4], 1, 100000);
    if (mib < 0 || count < 0) {
      std::fprintf(stderr,
                   "--only %s: expected MiB in 1..1024 and a count in 1..100000, got %s %s\n",
                   which.c_str(), argv[3], argv[4]);
      return 2;
    }
    const std::uint64_t bytes = static_cast<std::uint64_t>(mib) << 20;
    Cost total;
    for (long long i = 0; i < count; ++i) {
      const Cost c = baseline.empty() ? twinbench_download(path, bytes)
                                      : bulk_send(path, bytes, baseline == "--bulk-send-fast");
      total.cpu += c.cpu;
      total.events += c.events;
    }
    std::printf("%lld %s downloads of %lld MiB: %.3f ms CPU, %llu events each\n", count,
                baseline.empty() ? "twinbench" : baseline.c_str() + 2, mib,
                total.cpu * 1e3 / static_cast<double>(count),
                static_cast<unsigned long long>(total.events / static_cast<std::uint64_t>(count)));
    return 0;
  }
  const long long repetitions = argc == 2 ? whole_number(argv[1], 1, 100) : argc == 1 ? 3 : -1;
  if (repetitions < 0) {
    std::fprintf(stderr,
                 "usage: %s [repetitions: 1..100, default 3]\n"
                 "       %s --only plain|profile|profile-http MiB count "
                 "[--bulk-send|--bulk-send-fast]\n",
                 argv[0], argv[0]);
    return 2;
  }
  for (const BenchPath* path : {&kPlainPath, &kProfilePath, &kProfileWithoutTlsPath})
    bench(*path, static_cast<int>(repetitions));
  return 0;
}
