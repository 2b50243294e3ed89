// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's DataRate::CalculateBytesTxTime, which is GPL-2.0-only (LICENSE).
// DataRate::CalculateBytesTxTime: a point-to-point device asks its rate for every packet it
// sends how long the packet takes, and TCP pacing asks for every segment; ns-3 divides in 128-bit
// fixed point each time (~1 % of an HTTPS 1 MiB download's CPU time). A link's rate and its packet
// sizes take few values, so ours remembers the last answers (per thread, by rate, size and the
// time resolution) and asks ns-3 for any other: every answer is one ns-3 gave.
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

#include <ns3/data-rate.h>
#include <ns3/global-value.h>
#include <ns3/nstime.h>
#include <ns3/mac48-address.h>
#include <ns3/node.h>
#include <ns3/object.h>
#include <ns3/rng-stream.h>
#include <ns3/tcp-option-rfc793.h>
#include <ns3/tcp-option-sack-permitted.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/tcp-option-ts.h>
#include <ns3/tcp-option-winscale.h>
#include <ns3/tcp-option.h>
#include <ns3/version-defines.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

std::atomic<std::uint64_t> tx_times_remembered{0};

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_tx_times_remembered() {
  return tx_times_remembered.load(std::memory_order_relaxed);
}

ns3::Time ns3::DataRate::CalculateBytesTxTime(uint32_t bytes) const {
  const auto library = tb::ns3_fast_paths::library_calculate_bytes_tx_time();
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kBytesTxTime)) return library(this, bytes);
  struct Remembered {
    std::uint64_t bps = 0;
    std::uint32_t bytes = 0;
    ns3::Time::Unit resolution = ns3::Time::LAST;  // none yet
    std::int64_t steps = 0;
  };
  thread_local std::array<Remembered, 16> remembered;
  const ns3::Time::Unit resolution = ns3::Time::GetResolution();
  // Fibonacci hashing: the product's top 4 bits mix every bit of the rate and size into a slot.
  const std::uint64_t key = (m_bps ^ (std::uint64_t{bytes} << 32) ^ bytes) * 0x9e3779b97f4a7c15u;
  Remembered& r = remembered[key >> 60];
  if (r.resolution == resolution && r.bps == m_bps && r.bytes == bytes) {
    tx_times_remembered.fetch_add(1, std::memory_order_relaxed);
    return ns3::Time(r.steps);  // in steps of the current resolution
  }
  const ns3::Time time = library(this, bytes);
  r = {m_bps, bytes, resolution, time.GetTimeStep()};
  return time;
}
