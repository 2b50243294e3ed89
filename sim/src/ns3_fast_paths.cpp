// SPDX-License-Identifier: GPL-2.0-only
// Reimplements ns-3.37's own functions (listed below), which are GPL-2.0-only (LICENSE).
// Faster stand-ins for functions of ns-3.37: ones that the simulation calls for every segment, and
// one that each of its random variables calls.
// ns-3 calls each through the PLT, so these definitions, linked into every program that simulates,
// are the ones that run; tests/sim/ns3_fast_paths_test.cpp checks each against ns-3's own function
// (found with dlsym RTLD_NEXT), and reproduce's results are byte-identical with and without them.
//
// Two functions of TcpTxBuffer walk the sent list from its head on every call:
//
// NextSeg (RFC 6675 NextSeg) walks the whole sent list for a segment marked lost (rule 1) or a
// rule-3 candidate before offering new data (rule 2), and the sender calls it once per segment
// sent: a segment's cost grew with the flight, so a 32 MiB transfer cost far more than 4x an 8 MiB
// one and NextSeg was the largest single cost of a file download reproduction (docs/tcp-model.md,
// "Simulation cost"). When no byte is marked lost (TcpTxBuffer keeps m_lostOut with every mark)
// and rule 3 is off (it is asked for in SACK recovery only), rules 1 and 3 cannot return anything
// and the walk is skipped; otherwise ns-3's own function runs.
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
//
// TcpOption::CreateOption, which TcpHeader::Deserialize calls for every option of every header
// read (three times per segment received: TcpL4Protocol and TcpSocketBase::ForwardUp peek at the
// header, DoForwardUp removes it), makes the option through an ObjectFactory: a TypeId lookup and
// a dynamic_cast across shared libraries that compares type names, ~7 % of a file download. Ours
// creates the same class directly, with the same construction (CreateObject: the registered
// constructor, SetTypeId, Construct). Making and freeing objects was still ~8 % of a plain 1 MiB
// download (a timestamp option and its END padding per read), so ours hands out one END and one
// NOP object, which hold nothing (their Deserialize only checks the kind byte), and reuses a
// timestamp option that no header holds any more, set back to zero as a new one is (reading it
// sets both fields, or fails and the header drops it). Headers hold options as
// Ptr<const TcpOption>, and copying a header shares them too, so only the objects' addresses
// differ from ns-3's.
//
// ObjectBase::ConstructSelf, which every CreateObject runs, walks the new object's type and each
// parent looking for attributes to set, through the TypeId registry (~9 % of a plain download:
// each segment sent and each header read makes TCP options, which have none). Ours remembers, per
// type (found on its first construction), whether its chain has any attribute; when it has none
// and no attribute was given, setting nothing is all ns-3's walk would do, so only
// NotifyConstructionCompleted runs. Otherwise ours walks as ns-3's does, setting each attribute
// from the construction list or the type's current initial value, but without ns-3's logging,
// which formats every value to a string even when nothing is logged (~2.5 % of a plain 1 MiB
// download's instructions: a simulation builds ~80 objects with attributes), and without looking
// each name up in NS_ATTRIBUTE_DEFAULT (with that set, ns-3's own function runs). Two differences,
// neither seen by twinbench: NS_LOG=ObjectBase prints no "construct" lines, and a type that gained
// an attribute after its first construction (ns-3 adds them in GetTypeId) would not get it.
//
// Mac48Address's constructor from text: PointToPointNetDevice::GetBroadcast, which Ipv4Interface
// asks for every packet sent, returns Mac48Address("ff:ff:ff:ff:ff:ff"), parsed digit by digit
// each time. Ours sets the six 0xff bytes for that text and lets ns-3 parse any other.
//
// Node::ChecksumEnabled, which the IP and TCP layers ask about five times per segment, copies the
// "ChecksumEnabled" global value through its checker each time (~2.5 % of a plain 1 MiB
// download). Ours remembers the answer until a global value is next set: it counts the calls that
// set one (GlobalValue's Bind, BindFailSafe, SetValue and ResetInitialValue, which ns-3 and its
// users reach through the PLT, so these definitions see every one; the calls between them inside
// global-value.cc start from one of them) and asks ns-3 again when the count moved.
//
// DataRate::CalculateBytesTxTime: a point-to-point device asks its rate for every packet it
// sends how long the packet takes, and TCP pacing asks for every segment; ns-3 divides in 128-bit
// fixed point each time (~1 % of an HTTPS 1 MiB download's CPU time). A link's rate and its packet
// sizes take few values, so ours remembers the last answers (per thread, by rate, size and the
// time resolution) and asks ns-3 for any other: every answer is one ns-3 gave.
//
// RngStream's constructor puts a stream of MRG32k3a at (stream, substream) of ns-3's seed: its
// state is the seed vector advanced by A^(stream * 2^127 + substream * 2^76), one matrix product
// per set bit of each. A simulation's seed gives its run (the substream) ~32 set bits, and the
// simulation makes ~30 random variables (each one twice: at construction, then AssignStreams), all
// on that run: ~1.5 % of a plain 1 MiB download's instructions. Ours remembers the seed vector
// advanced by the substream (per thread, for the last seed and substream) and advances that by the
// stream. The two advances are powers of one matrix, applied in exact modular arithmetic
// (MRG32k3a's MultModM), so their order does not change the state.
#include "twinbench/sim/ns3_fast_paths.hpp"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

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

// Only for the ns-3 whose functions these mirror (CMakeLists.txt asks for it exactly).
#if !(NS3_VERSION_MAJOR == 3 && NS3_VERSION_MINOR == 37)
#error "sim/src/ns3_fast_paths.cpp mirrors ns-3.37's functions: build against ns-3 3.37"
#endif

namespace tb::sim {
namespace {

// TWINBENCH_NS3_FAST_PATHS=0 runs ns-3's own functions throughout (results are the same; a check
// of that, or a way round a stand-in suspected of a fault); unset or 1, the stand-ins.
bool fast_paths_wanted() {
  const char* value = std::getenv("TWINBENCH_NS3_FAST_PATHS");
  if (value == nullptr || std::strcmp(value, "1") == 0) return true;
  if (std::strcmp(value, "0") == 0) return false;
  std::fprintf(stderr, "twinbench: TWINBENCH_NS3_FAST_PATHS=%s: expected 0 (off) or 1 (on)\n", value);
  std::exit(2);
}

std::atomic<bool> fast_paths_on{fast_paths_wanted()};

void* library_symbol(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (symbol == nullptr) {
    std::fprintf(stderr, "twinbench: ns-3's %s not found: %s\n", name, dlerror());
    std::abort();
  }
  return symbol;
}

// ns-3's own definition of `Symbol` as a `Function`, looked up once.
template <typename Function, const char* const& Symbol>
Function resolved() {
  static const auto function = reinterpret_cast<Function>(library_symbol(Symbol));
  return function;
}

}  // namespace

namespace {

// Each stand-in and the ns-3 library whose own code calls it (in ns-3.37's sources), through its
// PLT. A library linked with -Bsymbolic, or built with LTO or -fno-semantic-interposition, binds
// such calls directly: it then has no dynamic relocation for the symbol, and the stand-in would
// not be reached from inside it (for the scoreboard group, its remembered state would go stale).
struct Reach {
  Ns3FastPath path;
  const char* library;  // the start of its file name
  const char* symbol;
};

constexpr Reach kReaches[] = {
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kNextSegSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kUpdateSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kRetransmittedDataAckedSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kSetSentListLostSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kResetRenoSackSymbol},
    {Ns3FastPath::kScoreboard, "libns3-internet.so", kResetLastSegmentSentSymbol},
    {Ns3FastPath::kCreateOption, "libns3-internet.so", kCreateOptionSymbol},
    {Ns3FastPath::kConstructSelf, "libns3-core.so", kConstructSelfSymbol},
    {Ns3FastPath::kRngStream, "libns3-core.so", kRngStreamConstructorSymbol},
    {Ns3FastPath::kMac48Broadcast, "libns3-point-to-point.so", kMac48AddressFromTextSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-internet.so", kChecksumEnabledSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalBindSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalBindFailSafeSymbol},
    {Ns3FastPath::kChecksumEnabled, "libns3-core.so", kGlobalResetInitialValueSymbol},
    {Ns3FastPath::kBytesTxTime, "libns3-point-to-point.so", kCalculateBytesTxTimeSymbol},
    {Ns3FastPath::kBytesTxTime, "libns3-internet.so", kCalculateBytesTxTimeSymbol},
};

constexpr const char* kPathNames[] = {"TcpTxBuffer scoreboard", "TcpOption::CreateOption",
                                      "ObjectBase::ConstructSelf", "RngStream constructor",
                                      "Mac48Address broadcast", "Node::ChecksumEnabled",
                                      "DataRate::CalculateBytesTxTime"};

std::vector<std::string> unreached_reasons() {
  std::map<std::string, std::set<std::string>> relocated;  // per library, read once
  std::vector<std::string> reasons;
  for (const Reach& r : kReaches) {
    if (!relocated.count(r.library)) relocated[r.library] = ns3_relocated_symbols(r.library);
    if (!relocated[r.library].count(r.symbol))
      reasons.push_back(std::string(kPathNames[static_cast<int>(r.path)]) + ": " + r.library +
                        " has no relocation for " + r.symbol +
                        " (its calls are bound directly: -Bsymbolic, LTO or "
                        "-fno-semantic-interposition?)");
  }
  return reasons;
}

// Which groups of stand-ins ns-3's own callers reach, checked once per process: a group with a
// symbol they do not reach runs ns-3's own functions, with a warning.
const std::array<bool, std::size(kPathNames)>& reached() {
  static const auto groups = [] {
    std::array<bool, std::size(kPathNames)> ok;
    ok.fill(true);
    for (const std::string& reason : unreached_reasons()) {
      for (std::size_t g = 0; g < std::size(kPathNames); ++g)
        if (reason.starts_with(std::string(kPathNames[g]) + ":")) ok[g] = false;
      std::fprintf(stderr, "twinbench: an ns-3 fast path is off, ns-3's own function runs: %s\n",
                   reason.c_str());
    }
    return ok;
  }();
  return groups;
}

}  // namespace

std::set<std::string> ns3_relocated_symbols(const std::string& library) {
  struct Search {
    const std::string& library;
    std::set<std::string> names;
  } search{library, {}};
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto& s = *static_cast<Search*>(data);
        const char* slash = info->dlpi_name ? std::strrchr(info->dlpi_name, '/') : nullptr;
        const std::string file = slash ? slash + 1 : (info->dlpi_name ? info->dlpi_name : "");
        if (!file.starts_with(s.library)) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
          // glibc has already added the load address to these in its copy of the section; an
          // address below the load address has not had it added.
          const auto at = [&](ElfW(Addr) a) { return a < info->dlpi_addr ? a + info->dlpi_addr : a; };
          const ElfW(Sym)* symbols = nullptr;
          const char* strings = nullptr;
          ElfW(Addr) plt = 0, rela = 0;
          std::size_t plt_size = 0, rela_size = 0;
          for (auto* d = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
               d->d_tag != DT_NULL; ++d) {
            switch (d->d_tag) {
              case DT_SYMTAB: symbols = reinterpret_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr)); break;
              case DT_STRTAB: strings = reinterpret_cast<const char*>(at(d->d_un.d_ptr)); break;
              case DT_JMPREL: plt = at(d->d_un.d_ptr); break;
              case DT_PLTRELSZ: plt_size = d->d_un.d_val; break;
              case DT_RELA: rela = at(d->d_un.d_ptr); break;
              case DT_RELASZ: rela_size = d->d_un.d_val; break;
              default: break;
            }
          }
          if (symbols == nullptr || strings == nullptr) continue;
          for (const auto& [start, size] : {std::pair{plt, plt_size}, std::pair{rela, rela_size}}) {
            const auto* r = reinterpret_cast<const ElfW(Rela)*>(start);
            for (std::size_t k = 0; start != 0 && k < size / sizeof(ElfW(Rela)); ++k)
              if (const auto sym = ELF64_R_SYM(r[k].r_info); sym != 0)
                s.names.insert(strings + symbols[sym].st_name);
          }
        }
        return 0;
      },
      &search);
  return search.names;
}

std::vector<std::string> ns3_fast_paths_unreached() { return unreached_reasons(); }

void set_ns3_fast_paths(bool on) { fast_paths_on.store(on, std::memory_order_relaxed); }
bool ns3_fast_paths_on() { return fast_paths_on.load(std::memory_order_relaxed); }
bool ns3_fast_path_on(Ns3FastPath path) {
  return ns3_fast_paths_on() && reached()[static_cast<int>(path)];
}

NextSegFunction library_next_seg() { return resolved<NextSegFunction, kNextSegSymbol>(); }
UpdateFunction library_update() { return resolved<UpdateFunction, kUpdateSymbol>(); }
RetransmittedDataAckedFunction library_retransmitted_data_acked() {
  return resolved<RetransmittedDataAckedFunction, kRetransmittedDataAckedSymbol>();
}
CreateOptionFunction library_create_option() {
  return resolved<CreateOptionFunction, kCreateOptionSymbol>();
}
ConstructSelfFunction library_construct_self() {
  return resolved<ConstructSelfFunction, kConstructSelfSymbol>();
}
Mac48AddressFromText library_mac48_address_from_text() {
  return resolved<Mac48AddressFromText, kMac48AddressFromTextSymbol>();
}
CalculateBytesTxTimeFunction library_calculate_bytes_tx_time() {
  return resolved<CalculateBytesTxTimeFunction, kCalculateBytesTxTimeSymbol>();
}
ChecksumEnabledFunction library_checksum_enabled() {
  return resolved<ChecksumEnabledFunction, kChecksumEnabledSymbol>();
}
RngStreamConstructor library_rng_stream_constructor() {
  return resolved<RngStreamConstructor, kRngStreamConstructorSymbol>();
}

}  // namespace tb::sim

bool ns3::TcpTxBuffer::NextSeg(SequenceNumber32* seq, SequenceNumber32* seqHigh,
                               bool isRecovery) const {
  if (m_lostOut > 0 || isRecovery || !tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kScoreboard))
    return tb::sim::library_next_seg()(this, seq, seqHigh, isRecovery);
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
        ns3::TypeId("tb::sim::ScoreboardProgress").SetParent<ns3::Object>();
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

std::uint64_t tb::sim::ns3_loss_counts_cut_short() {
  return loss_counts_cut_short.load(std::memory_order_relaxed);
}

std::uint64_t tb::sim::ns3_block_walks_cut_short() {
  return block_walks_cut_short.load(std::memory_order_relaxed);
}

uint32_t ns3::TcpTxBuffer::Update(const TcpOptionSack::SackList& list,
                                  const Callback<void, TcpTxItem*>& sackedCb) {
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kScoreboard))
    return tb::sim::library_update()(this, list, sackedCb);
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
  tb::sim::resolved<tb::sim::TxBufferResetFunction, tb::sim::kResetRenoSackSymbol>()(this);
}

void ns3::TcpTxBuffer::ResetSentList() {
  forget_scoreboard_progress(this);
  tb::sim::resolved<tb::sim::TxBufferResetFunction, tb::sim::kResetSentListSymbol>()(this);
}

void ns3::TcpTxBuffer::SetSentListLost(bool resetSack) {
  if (resetSack) forget_scoreboard_progress(this);  // else every item not SACKed becomes lost
  tb::sim::resolved<tb::sim::SetSentListLostFunction, tb::sim::kSetSentListLostSymbol>()(this,
                                                                                         resetSack);
}

void ns3::TcpTxBuffer::ResetLastSegmentSent() {
  forget_scoreboard_progress(this);
  tb::sim::resolved<tb::sim::TxBufferResetFunction, tb::sim::kResetLastSegmentSentSymbol>()(this);
}

bool ns3::TcpTxBuffer::IsRetransmittedDataAcked(const SequenceNumber32& ack) const {
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kScoreboard))
    return tb::sim::library_retransmitted_data_acked()(this, ack);
  for (const TcpTxItem* item : m_sentList) {
    if (item->m_startSeq > ack) return false;
    if (item->m_startSeq + item->m_packet->GetSize() == ack && !item->m_sacked && item->m_retrans)
      return true;
  }
  return false;
}

namespace {

std::atomic<std::uint64_t> tcp_options_reused{0};

// END and NOP hold nothing that reading them sets: one object of each per thread serves every
// header (ns-3's Ptr counts are not atomic, so not across threads).
template <typename Option>
ns3::Ptr<Option> shared_option() {
  thread_local const ns3::Ptr<Option> option = ns3::CreateObject<Option>();
  tcp_options_reused.fetch_add(1, std::memory_order_relaxed);
  return option;
}

// A timestamp option that no header holds any more (only this pool counts it), set back to what a
// new one holds; a new one when all are held. A received segment's header is read three times
// while the earlier reads are still alive, and an ACK sent in between reads none.
ns3::Ptr<ns3::TcpOptionTS> recycled_timestamp_option() {
  thread_local std::array<ns3::Ptr<ns3::TcpOptionTS>, 8> pool;
  for (auto& option : pool) {
    if (!option) {
      option = ns3::CreateObject<ns3::TcpOptionTS>();
      return option;
    }
    if (option->GetReferenceCount() == 1) {
      option->SetTimestamp(0);
      option->SetEcho(0);
      tcp_options_reused.fetch_add(1, std::memory_order_relaxed);
      return option;
    }
  }
  return ns3::CreateObject<ns3::TcpOptionTS>();
}

}  // namespace

std::uint64_t tb::sim::ns3_tcp_options_reused() {
  return tcp_options_reused.load(std::memory_order_relaxed);
}

ns3::Ptr<ns3::TcpOption> ns3::TcpOption::CreateOption(uint8_t kind) {
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kCreateOption))
    return tb::sim::library_create_option()(kind);
  switch (kind) {
    case END:
      return shared_option<TcpOptionEnd>();
    case MSS:
      return CreateObject<TcpOptionMSS>();
    case NOP:
      return shared_option<TcpOptionNOP>();
    case TS:
      return recycled_timestamp_option();
    case WINSCALE:
      return CreateObject<TcpOptionWinScale>();
    case SACKPERMITTED:
      return CreateObject<TcpOptionSackPermitted>();
    case SACK:
      return CreateObject<TcpOptionSack>();
    default:
      return CreateObject<TcpOptionUnknown>();
  }
}

namespace {

// Per TypeId uid (a uint16_t): 0 not seen yet, 1 no attribute in its chain, 2 some. Written by
// whichever thread sees the type first; every writer writes the same value.
std::array<std::atomic<std::uint8_t>, 1 << 16> chain_attributes{};

bool chain_has_attributes(ns3::TypeId tid) {
  std::atomic<std::uint8_t>& known = chain_attributes[tid.GetUid()];
  if (const std::uint8_t k = known.load(std::memory_order_relaxed); k != 0) return k == 2;
  bool some = false;
  // ns-3's walk: the type and its parents, up to but not including ObjectBase.
  for (ns3::TypeId t = tid; t != ns3::ObjectBase::GetTypeId(); t = t.GetParent())
    some = some || t.GetAttributeN() > 0;
  known.store(some ? 2 : 1, std::memory_order_relaxed);
  return some;
}

std::atomic<std::uint64_t> constructions_skipped{0};

// NS_ATTRIBUTE_DEFAULT gives attributes values by name: ns-3's own walk looks each one up there.
bool attribute_defaults_in_environment() {
  static const bool present = [] {
    const char* defaults = std::getenv("NS_ATTRIBUTE_DEFAULT");
    return defaults != nullptr && *defaults != '\0';
  }();
  return present;
}

std::atomic<std::uint64_t> constructions_set_quietly{0};

}  // namespace

std::uint64_t tb::sim::ns3_constructions_skipped() {
  return constructions_skipped.load(std::memory_order_relaxed);
}

std::uint64_t tb::sim::ns3_constructions_set_quietly() {
  return constructions_set_quietly.load(std::memory_order_relaxed);
}

void ns3::ObjectBase::ConstructSelf(const AttributeConstructionList& attributes) {
  const auto library = tb::sim::library_construct_self();
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kConstructSelf)) return library(this, attributes);
  const TypeId instance = GetInstanceTypeId();
  if (attributes.Begin() == attributes.End() && !chain_has_attributes(instance)) {
    constructions_skipped.fetch_add(1, std::memory_order_relaxed);
    NotifyConstructionCompleted();
    return;
  }
  if (attribute_defaults_in_environment()) return library(this, attributes);
  // ns-3's walk without its logging, which formats every value (SerializeToString) even when
  // nothing is logged, and without the environment lookup, which has nothing to find.
  TypeId tid = instance;
  do {
    for (std::size_t i = 0; i < tid.GetAttributeN(); ++i) {
      const TypeId::AttributeInformation info = tid.GetAttribute(i);
      Ptr<const AttributeValue> value = attributes.Find(info.checker);
      if (!(info.flags & TypeId::ATTR_CONSTRUCT)) {
        if (!value) continue;
        return library(this, attributes);  // ns-3's fatal error: not settable at construction
      }
      DoSet(info.accessor, info.checker, value ? *value : *info.initialValue);
    }
    tid = tid.GetParent();
  } while (tid != ObjectBase::GetTypeId());
  constructions_set_quietly.fetch_add(1, std::memory_order_relaxed);
  NotifyConstructionCompleted();
}

ns3::Mac48Address::Mac48Address(const char* str) {
  if (tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kMac48Broadcast) &&
      std::strcmp(str, "ff:ff:ff:ff:ff:ff") == 0) {
    std::fill(std::begin(m_address), std::end(m_address), 0xff);
    return;
  }
  tb::sim::library_mac48_address_from_text()(this, str);
}

namespace {

std::atomic<std::uint64_t> global_value_changes{0};

}  // namespace

std::uint64_t tb::sim::ns3_global_value_changes() {
  return global_value_changes.load(std::memory_order_acquire);
}

// Each counts before and after: a reader that saw the count before a change began asks again.
void ns3::GlobalValue::Bind(std::string name, const AttributeValue& value) {
  const auto library = tb::sim::resolved<tb::sim::GlobalBindFunction, tb::sim::kGlobalBindSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  library(std::move(name), value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
}

bool ns3::GlobalValue::BindFailSafe(std::string name, const AttributeValue& value) {
  const auto library =
      tb::sim::resolved<tb::sim::GlobalBindFailSafeFunction, tb::sim::kGlobalBindFailSafeSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  const bool bound = library(std::move(name), value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  return bound;
}

bool ns3::GlobalValue::SetValue(const AttributeValue& value) {
  const auto library =
      tb::sim::resolved<tb::sim::GlobalSetValueFunction, tb::sim::kGlobalSetValueSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  const bool set = library(this, value);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  return set;
}

void ns3::GlobalValue::ResetInitialValue() {
  const auto library = tb::sim::resolved<tb::sim::GlobalResetInitialValueFunction,
                                         tb::sim::kGlobalResetInitialValueSymbol>();
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
  library(this);
  global_value_changes.fetch_add(1, std::memory_order_acq_rel);
}

bool ns3::Node::ChecksumEnabled() {
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kChecksumEnabled))
    return tb::sim::library_checksum_enabled()();
  struct Remembered {
    std::uint64_t changes = ~std::uint64_t{0};
    bool enabled = false;
  };
  thread_local Remembered remembered;
  const std::uint64_t changes = global_value_changes.load(std::memory_order_acquire);
  if (remembered.changes == changes && changes % 2 == 0) return remembered.enabled;
  const bool enabled = tb::sim::library_checksum_enabled()();
  if (global_value_changes.load(std::memory_order_acquire) == changes)
    remembered = {changes, enabled};
  return enabled;
}

namespace {

std::atomic<std::uint64_t> tx_times_remembered{0};

}  // namespace

std::uint64_t tb::sim::ns3_tx_times_remembered() {
  return tx_times_remembered.load(std::memory_order_relaxed);
}

ns3::Time ns3::DataRate::CalculateBytesTxTime(uint32_t bytes) const {
  const auto library = tb::sim::library_calculate_bytes_tx_time();
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kBytesTxTime)) return library(this, bytes);
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

std::uint64_t tb::sim::ns3_rng_substream_starts_reused() {
  return substream_starts_reused.load(std::memory_order_relaxed);
}

ns3::RngStream::RngStream(uint32_t seed, uint64_t stream, uint64_t substream) {
  // MRG32k3a's smaller modulus; ns-3's own constructor rejects such seeds.
  constexpr std::uint32_t kM2 = 4294944443u;
  if (!tb::sim::ns3_fast_path_on(tb::sim::Ns3FastPath::kRngStream) || seed == 0 || seed >= kM2) {
    tb::sim::library_rng_stream_constructor()(this, seed, stream, substream);
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

