// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's RngStream constructor, which is GPL-2.0-only (LICENSE).
// RngStream's constructor puts a stream of MRG32k3a at (stream, substream) of ns-3's seed: its
// state is the seed vector advanced by A^(stream * 2^127 + substream * 2^76), one matrix product
// per set bit of each. A simulation's seed gives its run (the substream) ~32 set bits, and the
// simulation makes ~30 random variables (each one twice: at construction, then AssignStreams), all
// on that run: ~1.5 % of a plain 1 MiB download's instructions. Ours remembers the seed vector
// advanced by the substream (per thread, for the last seed and substream) and advances that by the
// stream. The two advances are powers of one matrix, applied in exact modular arithmetic
// (MRG32k3a's MultModM), so their order does not change the state.
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

// The seed vector advanced by the last substream asked for, per thread.
struct SubstreamStart {
  bool valid = false;
  std::uint32_t seed = 0;
  std::uint64_t substream = 0;
  std::array<double, 6> state{};
};
thread_local SubstreamStart last_substream_start;

std::atomic<std::uint64_t> substream_starts_reused{0};

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_rng_substream_starts_reused() {
  return substream_starts_reused.load(std::memory_order_relaxed);
}

ns3::RngStream::RngStream(uint32_t seed, uint64_t stream, uint64_t substream) {
  // MRG32k3a's smaller modulus; ns-3's own constructor rejects such seeds.
  constexpr std::uint32_t kM2 = 4294944443u;
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kRngStream) || seed == 0 || seed >= kM2) {
    tb::ns3_fast_paths::library_rng_stream_constructor()(this, seed, stream, substream);
    return;
  }
  SubstreamStart& start = last_substream_start;
  if (start.valid && start.seed == seed && start.substream == substream) {
    substream_starts_reused.fetch_add(1, std::memory_order_relaxed);
  } else {
    start.state.fill(seed);
    AdvanceNthBy(substream, 76, start.state.data());
    start.valid = true;
    start.seed = seed;
    start.substream = substream;
  }
  std::copy(start.state.begin(), start.state.end(), m_currentState);
  AdvanceNthBy(stream, 127, m_currentState);
}
