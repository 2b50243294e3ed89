// ns-3.37's TcpTxBuffer::NextSeg (RFC 6675 NextSeg) walks the whole sent list on every call, for
// a segment marked lost (rule 1) or a rule-3 candidate, before offering new data (rule 2), and the
// sender calls it once per segment sent: a segment's cost grew with the flight, so a 32 MiB
// transfer cost far more than 4x an 8 MiB one and NextSeg was the largest single cost of a file
// download reproduction (docs/tcp-model.md, "Simulation cost"). TcpSocketBase calls it through the
// PLT, so this definition, linked into every program that simulates, is the one that runs. When
// no byte is marked lost (TcpTxBuffer keeps m_lostOut with every mark) and rule 3 is off (it is
// asked for in SACK recovery only), rules 1 and 3 cannot return anything and the walk is skipped;
// otherwise ns-3's own function runs. tests/sim/ns3_next_seg_test.cpp checks both against ns-3's
// function; reproduce's results are byte-identical with and without it.
#include "twinbench/sim/ns3_next_seg.hpp"

#include <dlfcn.h>

#include <ns3/version-defines.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

// Only for the ns-3 whose NextSeg this mirrors; any other version keeps its own.
#if NS3_VERSION_MAJOR == 3 && NS3_VERSION_MINOR == 37
#define TWINBENCH_FAST_NEXT_SEG 1

namespace tb::sim {

NextSegFunction library_next_seg() {
  static const auto function = [] {
    void* symbol = dlsym(RTLD_NEXT, kNextSegSymbol);
    if (symbol == nullptr) {
      std::fprintf(stderr, "twinbench: ns-3's TcpTxBuffer::NextSeg not found: %s\n", dlerror());
      std::abort();
    }
    return reinterpret_cast<NextSegFunction>(symbol);
  }();
  return function;
}

}  // namespace tb::sim

bool ns3::TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh, bool isRecovery) const {
  if (m_lostOut > 0 || isRecovery) return tb::sim::library_next_seg()(this, seq, seqHigh, isRecovery);
  // Rule 2: unsent data, if the receiver's window allows (ns-3's comparison and clamp).
  const SequenceNumber32 high_data = m_firstByteSeq + m_sentSize;
  if (SizeFromSequence(high_data) == 0) return false;
  const uint32_t window = m_rWndCallback();
  if (m_sentSize > window) return false;
  *seq = high_data;
  *seqHigh = high_data + std::min<uint32_t>(m_segmentSize, window - m_sentSize);
  return true;
}

#else

tb::sim::NextSegFunction tb::sim::library_next_seg() { return nullptr; }

#endif
