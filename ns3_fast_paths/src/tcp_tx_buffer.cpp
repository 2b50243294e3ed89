// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's TcpTxBuffer functions, which are GPL-2.0-only (LICENSE).
// Two functions of TcpTxBuffer walk the sent list from its head on every call:
//
// NextSeg (RFC 6675 NextSeg) walks the whole sent list for a segment marked lost (rule 1) or a
// rule-3 candidate before offering new data (rule 2), and the sender calls it once per segment
// sent: a segment's cost grew with the flight, so a 32 MiB transfer cost far more than 4x an 8 MiB
// one and NextSeg was the largest single cost of a file download reproduction
// (docs/simulation-cost.md). When no byte is marked lost (TcpTxBuffer keeps m_lostOut with every
// mark) and rule 3 is off (it is asked for in SACK recovery only), rules 1 and 3 cannot return
// anything and the walk is skipped; otherwise ns-3's own function runs.
//
// Update: for each SACK block, ns-3 walks from the head of the sent list to the block, so in loss
// recovery every ACK cost as much as the flight. The blocks a receiver reports lie mostly near the
// highest SACKed item, so ours finds where a block starts by walking from there (ns-3 keeps that
// item and its sequence number, m_highestSack), or from the end (m_firstByteSeq + m_sentSize), and
// marks from there as ns-3 does. Items before that start lie wholly below the block, where ns-3's
// walk neither marks nor stops. A block that grew from the newest block of the update before (the
// same start; the usual one in recovery: data arriving above a hole) is walked from the highest
// SACKed item when that lies in the old block, whose items are all SACKed: the walk would only
// pass over them. Then, when anything was SACKed, ns-3 counts losses (UpdateLostCount): from the
// highest SACKed item down to the head it counts SACKed items and, once DupAckThresh are counted,
// marks every item below that is neither SACKed nor lost as lost; again the whole flight per ACK.
// Ours counts the same way but stops marking where the items below are known to be settled (each
// SACKed or lost, but the head, which ns-3 then handles on its own): the items below where the
// last count reached the threshold were settled by it. Nothing in ns-3.37 un-SACKs or unsettles
// items but SetSentListLost(true), ResetRenoSack, ResetSentList, ResetLastSegmentSent (defined
// here too: they forget what was known) and the head's own handling, and items are only added
// above the data sent. What is known is aggregated to the buffer (ScoreboardProgress), so it lives
// and dies with it.
//
// IsRetransmittedDataAcked: in recovery, ns-3's ReceivedAck asks, for each segment a partial ACK
// covers, whether a retransmitted item ends there, and ns-3 walks the whole sent list for each
// (~3 % of a 32 MiB download on reproduce's path). The list is in sequence order, so ours stops at
// the first item that starts beyond the number asked about: no later one can end there.
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

#include "resolved.hpp"

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

bool ns3::TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh,
                               bool isRecovery) const {
  if (m_lostOut > 0 || isRecovery || !tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kScoreboard))
    return tb::ns3_fast_paths::library_next_seg()(this, seq, seqHigh, isRecovery);
  // Rule 2: unsent data, if the receiver's window allows (ns-3's comparison and clamp).
  const SequenceNumber32 high_data = m_firstByteSeq + m_sentSize;
  if (SizeFromSequence(high_data) == 0) return false;
  const uint32_t window = m_rWndCallback();
  if (m_sentSize > window) return false;
  *seq = high_data;
  *seqHigh = high_data + std::min<uint32_t>(m_segmentSize, window - m_sentSize);
  return true;
}

namespace {

uint32_t bytes_between(ns3::SequenceNumber32 a, ns3::SequenceNumber32 b) {
  return a < b ? static_cast<uint32_t>(b - a) : static_cast<uint32_t>(a - b);
}

}  // namespace

namespace {

// What a sent list's last updates left known, aggregated to the buffer so that it lives and dies
// with it: how far up it is settled (every item but the head that starts below `settled_end` is
// SACKed or marked lost), and a SACK block whose items are all SACKed (every item lying wholly
// within [block_first, block_end)).
class ScoreboardProgress : public ns3::Object {
 public:
  static ns3::TypeId GetTypeId() {
    static const ns3::TypeId tid =
        ns3::TypeId("tb::ns3_fast_paths::ScoreboardProgress").SetParent<ns3::Object>();
    return tid;
  }
  bool settled_known = false;
  ns3::SequenceNumber32 settled_end{0};
  bool block_known = false;
  ns3::SequenceNumber32 block_first{0};
  ns3::SequenceNumber32 block_end{0};
};

std::atomic<std::uint64_t> loss_counts_cut_short{0};

std::atomic<std::uint64_t> block_walks_cut_short{0};

void forget_scoreboard_progress(ns3::TcpTxBuffer* buffer) {
  if (auto progress = buffer->GetObject<ScoreboardProgress>()) {
    progress->settled_known = false;
    progress->block_known = false;
  }
}

}  // namespace

std::uint64_t tb::ns3_fast_paths::ns3_loss_counts_cut_short() {
  return loss_counts_cut_short.load(std::memory_order_relaxed);
}

std::uint64_t tb::ns3_fast_paths::ns3_block_walks_cut_short() {
  return block_walks_cut_short.load(std::memory_order_relaxed);
}

uint32_t ns3::TcpTxBuffer::Update(const TcpOptionSack::SackList& list,
                                  const Callback<void, TcpTxItem*>& sackedCb) {
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kScoreboard))
    return tb::ns3_fast_paths::library_update()(this, list, sackedCb);
  uint32_t bytes_sacked = 0;
  const SequenceNumber32 sent_end = m_firstByteSeq + m_sentSize;
  Ptr<ScoreboardProgress> progress = GetObject<ScoreboardProgress>();
  const auto known_progress = [&]() -> ScoreboardProgress& {  // made on the first need
    if (!progress) {
      progress = CreateObject<ScoreboardProgress>();
      AggregateObject(progress);
    }
    return *progress;
  };
  for (auto block_it = list.begin(); block_it != list.end(); ++block_it) {
    const auto& block = *block_it;
    // A block beyond the data sent ends the update at once, without recounting losses (ns-3's
    // rule).
    if (sent_end < block.first) return bytes_sacked;
    PacketList::const_iterator item = m_sentList.cbegin();
    SequenceNumber32 begin = m_firstByteSeq;
    if (progress && progress->block_known && block.first == progress->block_first &&
        progress->block_end <= block.second && m_firstByteSeq < block.first &&
        m_highestSack.first != m_sentList.cend() && block.first <= m_highestSack.second &&
        m_highestSack.second < progress->block_end) {
      // The block grew from one whose items are all SACKed, and the highest SACKed item lies in
      // that: every item from the block's start to there is SACKed, which the walk would only pass
      // over. (The head, which DiscardUpTo may un-SACK, lies below the block.)
      item = m_highestSack.first;
      begin = m_highestSack.second;
      block_walks_cut_short.fetch_add(1, std::memory_order_relaxed);
    } else {
      // The walk starts at the last item beginning at or before the block, found from the nearest
      // item whose sequence number is known: the head, the highest SACKed item or the end.
      if (m_highestSack.first != m_sentList.cend() &&
          bytes_between(m_highestSack.second, block.first) < bytes_between(begin, block.first)) {
        item = m_highestSack.first;
        begin = m_highestSack.second;
      }
      if (bytes_between(sent_end, block.first) < bytes_between(begin, block.first)) {
        item = m_sentList.cend();
        begin = sent_end;
      }
      while (item != m_sentList.cbegin() && (item == m_sentList.cend() || begin > block.first)) {
        --item;
        begin -= (*item)->m_packet->GetSize();
      }
      while (item != m_sentList.cend() && std::next(item) != m_sentList.cend() &&
             begin + (*item)->m_packet->GetSize() <= block.first) {
        begin += (*item)->m_packet->GetSize();
        ++item;
      }
    }
    // Only an item lying wholly within the block is marked; the first one reaching past it ends the
    // walk.
    for (; item != m_sentList.end(); ++item) {
      const uint32_t size = (*item)->m_packet->GetSize();
      if (begin >= block.first && begin + size <= block.second) {
        if (!(*item)->m_sacked) {
          if ((*item)->m_lost) {
            (*item)->m_lost = false;
            m_lostOut -= size;
          }
          (*item)->m_sacked = true;
          m_sackedOut += size;
          bytes_sacked += size;
          if (m_highestSack.first == m_sentList.end() || m_highestSack.second <= begin + size) {
            m_highestSack = std::make_pair(item, begin);
          }
          if (!sackedCb.IsNull()) sackedCb(*item);
        }
      } else if (begin + size > block.second) {
        break;
      }
      begin += size;
    }
    // Every item lying wholly within the first block (the newest) is SACKed now. Not known of a
    // block reaching past the data sent: items sent later would lie in it unSACKed.
    if (block_it == list.begin() && !(sent_end < block.second)) {
      ScoreboardProgress& known = known_progress();
      known.block_known = true;
      known.block_first = block.first;
      known.block_end = block.second;
    }
  }
  if (bytes_sacked > 0) {
    // UpdateLostCount, stopping where the items below are settled (see the top of this file).
    known_progress();
    uint32_t sacked = 0;
    const TcpTxItem* threshold_item = nullptr;  // where DupAckThresh SACKed items were counted
    for (auto it = m_highestSack.first; it != m_sentList.begin(); --it) {
      TcpTxItem* item = *it;
      if (item->m_sacked) ++sacked;
      if (sacked < m_dupAckThresh) continue;
      if (threshold_item == nullptr) threshold_item = item;
      if (progress->settled_known && item->m_startSeq < progress->settled_end) {
        loss_counts_cut_short.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      if (!item->m_sacked && !item->m_lost) {
        item->m_lost = true;
        m_lostOut += item->m_packet->GetSize();
      }
    }
    if (sacked >= m_dupAckThresh) {
      TcpTxItem* head = *m_sentList.begin();  // marked whether SACKed or not, as ns-3 does
      if (!head->m_lost) {
        head->m_lost = true;
        m_lostOut += head->m_packet->GetSize();
      }
      const SequenceNumber32 settled =
          threshold_item->m_startSeq + threshold_item->m_packet->GetSize();
      if (!progress->settled_known || progress->settled_end < settled)
        progress->settled_end = settled;
      progress->settled_known = true;
    }
  }
  ConsistencyCheck();
  return bytes_sacked;
}

// The ways ns-3.37 un-SACKs or unsettles items of a sent list: what ScoreboardProgress knew is
// forgotten.
void ns3::TcpTxBuffer::ResetRenoSack() {
  forget_scoreboard_progress(this);
  tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::TxBufferResetFunction, tb::ns3_fast_paths::kResetRenoSackSymbol>()(this);
}

void ns3::TcpTxBuffer::ResetSentList() {
  forget_scoreboard_progress(this);
  tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::TxBufferResetFunction, tb::ns3_fast_paths::kResetSentListSymbol>()(this);
}

void ns3::TcpTxBuffer::SetSentListLost(bool resetSack) {
  if (resetSack) forget_scoreboard_progress(this);  // else every item not SACKed becomes lost
  tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::SetSentListLostFunction, tb::ns3_fast_paths::kSetSentListLostSymbol>()(this,
                                                                                         resetSack);
}

void ns3::TcpTxBuffer::ResetLastSegmentSent() {
  forget_scoreboard_progress(this);
  tb::ns3_fast_paths::resolved<tb::ns3_fast_paths::TxBufferResetFunction, tb::ns3_fast_paths::kResetLastSegmentSentSymbol>()(this);
}

bool ns3::TcpTxBuffer::IsRetransmittedDataAcked(const SequenceNumber32& ack) const {
  if (!tb::ns3_fast_paths::ns3_fast_path_on(tb::ns3_fast_paths::Ns3FastPath::kScoreboard))
    return tb::ns3_fast_paths::library_retransmitted_data_acked()(this, ack);
  for (const TcpTxItem* item : m_sentList) {
    if (item->m_startSeq > ack) return false;
    if (item->m_startSeq + item->m_packet->GetSize() == ack && !item->m_sacked && item->m_retrans)
      return true;
  }
  return false;
}
