#pragma once
// A constant-time path for ns-3.37's TcpTxBuffer::NextSeg (sim/src/ns3_next_seg.cpp).
#include <ns3/sequence-number.h>
#include <ns3/tcp-tx-buffer.h>

namespace tb::sim {

// The mangled name ns-3 calls it by, through the PLT.
inline constexpr const char* kNextSegSymbol = "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b";

using NextSegFunction = bool (*)(const ns3::TcpTxBuffer*, ns3::SequenceNumber32*, ns3::SequenceNumber32*, bool);

// ns-3's own TcpTxBuffer::NextSeg, the one in libns3-internet that ours stands in front of;
// nullptr if this build does not replace it.
NextSegFunction library_next_seg();

}  // namespace tb::sim
