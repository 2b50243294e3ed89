#pragma once
// Moves packets between the two TUN devices of the emulated path in real time: one thread, for
// both directions, reads what each side's kernel sends, asks that direction's LinkDirection when
// it arrives, holds it, and writes it into the other side's TUN when it is due. The thread sleeps
// until shortly before the next due time and spins the rest (`spin_us`), so packets leave within
// microseconds of their due time on an idle core (with 1 ns timer slack the sleep ends within tens
// of µs). At 100 Mbit/s a packet is due every 120 µs, so during a transfer the thread spins all
// the time; it is one real-time thread, not one per direction, so that on two cores the client
// and the server keep the other core (two spinning real-time threads starved them for tens of
// milliseconds). How late each packet actually left is recorded and reported.

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "twinbench/link/link_direction.hpp"

namespace tb::emulated {

// A packet as a side's interface saw it: sent (read from its TUN) or received (written to it),
// for captures. Only the first kCaptureBytes are kept: the IP and TCP headers with options.
inline constexpr std::size_t kCaptureBytes = 96;
struct CapturedPacket {
  std::int64_t at_ns;
  std::uint32_t length;  // the whole packet's
  std::string head;      // its first kCaptureBytes
};

// Writes a pcap file (LINKTYPE_RAW: IPv4 packets, snap length kCaptureBytes) of `packets`
// ordered by time, stamped relative to `origin_ns`; atomically.
void write_pcap(const std::string& path, std::vector<CapturedPacket> packets,
                std::int64_t origin_ns);

struct DirectionStats {
  std::uint64_t packets = 0;  // read from the sending side
  std::uint64_t delivered = 0;
  std::uint64_t queue_drops = 0;
  std::uint64_t policer_drops = 0;
  std::uint64_t losses = 0;
  std::vector<std::int64_t>
      lateness_ns;                       // per delivered packet: when it was written minus when due
  std::vector<CapturedPacket> sent;      // with capture on: as read from the sending side
  std::vector<CapturedPacket> received;  // with capture on: as written to the receiving side
};

struct LatenessSummary {
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
  std::uint64_t packets = 0;
};
LatenessSummary summarize_lateness(const std::vector<const DirectionStats*>& directions);

class LinkEmulator {
 public:
  // `client_tun` and `server_tun` stay owned by the caller and must outlive the emulator.
  LinkEmulator(int client_tun, int server_tun, const link::DirectionConfig& uplink,
               const link::DirectionConfig& downlink, std::int64_t spin_us = 200,
               bool capture = false);
  ~LinkEmulator();  // stop()
  LinkEmulator(const LinkEmulator&) = delete;
  LinkEmulator& operator=(const LinkEmulator&) = delete;

  // Stops the emulator's thread (packets still held are dropped) and joins it; idempotent.
  void stop();
  // After stop().
  const DirectionStats& uplink_stats() const { return uplink_.stats; }
  const DirectionStats& downlink_stats() const { return downlink_.stats; }

 private:
  struct Held {
    std::int64_t due_ns;
    std::string bytes;
  };
  struct Direction {
    int from = -1;
    int to = -1;
    link::LinkDirection model;
    DirectionStats stats;
    std::deque<Held> held;  // due times never decrease (LinkDirection keeps order)
  };
  void run();
  void deliver_due(Direction& d);
  void take_in(Direction& d, std::string& buffer);

  std::int64_t spin_ns_;
  bool capture_;
  std::atomic<bool> stopping_{false};
  // Time 0 of the link's delivery traces and schedules: the emulator's start, just before the
  // path releases the client program (the simulation's time 0 is its start too).
  const std::int64_t origin_ns_;
  Direction uplink_;
  Direction downlink_;
  std::thread thread_;  // both directions: one core for the emulator, the other for the hosts
};

// CLOCK_MONOTONIC in nanoseconds: the emulator's clock.
std::int64_t monotonic_ns();

}  // namespace tb::emulated
