#pragma once
// Faster stand-ins for functions of ns-3.37 (ns3_fast_paths/): ones called for every
// segment (TcpTxBuffer's NextSeg, SACK scoreboard Update and IsRetransmittedDataAcked, which
// walk the sent list, the Mac48Address constructor that parses the broadcast address,
// Node::ChecksumEnabled, which reads a global value through its checker,
// TcpOption::CreateOption, which makes options through an ObjectFactory, and
// ObjectBase::ConstructSelf, which walks a new object's type chain for attributes to set,
// DataRate::CalculateBytesTxTime, which divides in 128 bits for every packet a link sends), and
// the RngStream constructor, which every random variable of a simulation runs.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <ns3/attribute.h>
#include <ns3/callback.h>
#include <ns3/data-rate.h>
#include <ns3/global-value.h>
#include <ns3/mac48-address.h>
#include <ns3/ptr.h>
#include <ns3/sequence-number.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/rng-stream.h>
#include <ns3/tcp-option.h>
#include <ns3/tcp-tx-buffer.h>

namespace tb::ns3_fast_paths {

// The mangled names ns-3 calls them by, through the PLT.
inline constexpr const char* kNextSegSymbol =
    "_ZNK3ns311TcpTxBuffer7NextSegEPNS_14SequenceNumberIjiEES3_b";
inline constexpr const char* kUpdateSymbol =
    "_ZN3ns311TcpTxBuffer6UpdateERKNSt7__cxx114listISt4pairINS_14SequenceNumberIjiEES5_ESaIS6_"
    "EEERKNS_"
    "8CallbackIvJPNS_9TcpTxItemEEEE";
inline constexpr const char* kRetransmittedDataAckedSymbol =
    "_ZNK3ns311TcpTxBuffer24IsRetransmittedDataAckedERKNS_14SequenceNumberIjiEE";
inline constexpr const char* kSetSentListLostSymbol = "_ZN3ns311TcpTxBuffer15SetSentListLostEb";
inline constexpr const char* kResetRenoSackSymbol = "_ZN3ns311TcpTxBuffer13ResetRenoSackEv";
inline constexpr const char* kResetSentListSymbol = "_ZN3ns311TcpTxBuffer13ResetSentListEv";
inline constexpr const char* kResetLastSegmentSentSymbol =
    "_ZN3ns311TcpTxBuffer20ResetLastSegmentSentEv";
inline constexpr const char* kCreateOptionSymbol = "_ZN3ns39TcpOption12CreateOptionEh";
inline constexpr const char* kConstructSelfSymbol =
    "_ZN3ns310ObjectBase13ConstructSelfERKNS_25AttributeConstructionListE";
inline constexpr const char* kRngStreamConstructorSymbol = "_ZN3ns39RngStreamC1Ejmm";
inline constexpr const char* kMac48AddressFromTextSymbol = "_ZN3ns312Mac48AddressC1EPKc";
inline constexpr const char* kChecksumEnabledSymbol = "_ZN3ns34Node15ChecksumEnabledEv";
inline constexpr const char* kCalculateBytesTxTimeSymbol =
    "_ZNK3ns38DataRate20CalculateBytesTxTimeEj";
// The ways a global value changes (ns-3's own calls between them stay inside global-value.cc).
inline constexpr const char* kGlobalBindSymbol =
    "_ZN3ns311GlobalValue4BindENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_"
    "14AttributeValueE";
inline constexpr const char* kGlobalBindFailSafeSymbol =
    "_ZN3ns311GlobalValue12BindFailSafeENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_"
    "14AttributeValueE";
inline constexpr const char* kGlobalSetValueSymbol =
    "_ZN3ns311GlobalValue8SetValueERKNS_14AttributeValueE";
inline constexpr const char* kGlobalResetInitialValueSymbol =
    "_ZN3ns311GlobalValue17ResetInitialValueEv";

using NextSegFunction = bool (*)(const ns3::TcpTxBuffer*, ns3::SequenceNumber32*,
                                 ns3::SequenceNumber32*, bool);
using UpdateFunction = std::uint32_t (*)(ns3::TcpTxBuffer*, const ns3::TcpOptionSack::SackList&,
                                         const ns3::Callback<void, ns3::TcpTxItem*>&);
using RetransmittedDataAckedFunction = bool (*)(const ns3::TcpTxBuffer*,
                                                const ns3::SequenceNumber32&);
using TxBufferResetFunction = void (*)(ns3::TcpTxBuffer*);
using SetSentListLostFunction = void (*)(ns3::TcpTxBuffer*, bool);
using CreateOptionFunction = ns3::Ptr<ns3::TcpOption> (*)(uint8_t);
using ConstructSelfFunction = void (*)(ns3::ObjectBase*, const ns3::AttributeConstructionList&);
using RngStreamConstructor = void (*)(ns3::RngStream*, std::uint32_t, std::uint64_t, std::uint64_t);
using Mac48AddressFromText = void (*)(ns3::Mac48Address*, const char*);
using ChecksumEnabledFunction = bool (*)();
using CalculateBytesTxTimeFunction = ns3::Time (*)(const ns3::DataRate*, std::uint32_t);
using GlobalBindFunction = void (*)(std::string, const ns3::AttributeValue&);
using GlobalBindFailSafeFunction = bool (*)(std::string, const ns3::AttributeValue&);
using GlobalSetValueFunction = bool (*)(ns3::GlobalValue*, const ns3::AttributeValue&);
using GlobalResetInitialValueFunction = void (*)(ns3::GlobalValue*);

// ns-3's own functions, in libns3-internet, that ours stand in front of.
NextSegFunction library_next_seg();
UpdateFunction library_update();
RetransmittedDataAckedFunction library_retransmitted_data_acked();
CreateOptionFunction library_create_option();
ConstructSelfFunction library_construct_self();
RngStreamConstructor library_rng_stream_constructor();
Mac48AddressFromText library_mac48_address_from_text();
ChecksumEnabledFunction library_checksum_enabled();
CalculateBytesTxTimeFunction library_calculate_bytes_tx_time();
// Times any global value was set through GlobalValue's functions (Bind, BindFailSafe, SetValue,
// ResetInitialValue): what our Node::ChecksumEnabled's remembered answer is checked against.
std::uint64_t ns3_global_value_changes();
// Constructions our ConstructSelf completed without ns-3's walk: a test's evidence that ns-3's
// library, which calls it from its own Object::Construct, calls ours.
std::uint64_t ns3_constructions_skipped();
// Constructions with attributes that our ConstructSelf set without ns-3's logging walk.
std::uint64_t ns3_constructions_set_quietly();
// Loss counts (after a SACK) that our Update stopped short where the items below were settled.
std::uint64_t ns3_loss_counts_cut_short();
// SACK blocks our Update walked from the highest SACKed item: the block grew from one it had
// SACKed whole.
std::uint64_t ns3_block_walks_cut_short();
// Options our CreateOption handed out again (END and NOP objects, free timestamp options).
std::uint64_t ns3_tcp_options_reused();
// Transmission times our CalculateBytesTxTime answered from the ones it remembered.
std::uint64_t ns3_tx_times_remembered();
// Random number streams our RngStream constructor set up from a remembered substream start: the
// evidence that ns-3's RandomVariableStream::SetStream reaches ours.
std::uint64_t ns3_rng_substream_starts_reused();

// The stand-ins in groups that are on or off together (the scoreboard's functions share state).
enum class Ns3FastPath {
  kScoreboard,  // TcpTxBuffer: NextSeg, Update, IsRetransmittedDataAcked and the resets
  kCreateOption,
  kConstructSelf,
  kRngStream,
  kMac48Broadcast,
  kChecksumEnabled,  // with the GlobalValue setters it counts
  kBytesTxTime,
};

// Whether a group runs: the fast paths are on and ns-3's own callers reach every stand-in of the
// group (checked once per process from the libraries' dynamic relocations; a group they do not
// reach runs ns-3's own functions, and stderr says why).
bool ns3_fast_path_on(Ns3FastPath path);
// Why a group is not reached, one line per stand-in; empty with Debian's ns-3.37.
std::vector<std::string> ns3_fast_paths_unreached();
// The symbols the loaded library whose file name starts with `library` refers to through a
// dynamic relocation (PLT or GOT): the calls from inside it that an interposed definition reaches.
std::set<std::string> ns3_relocated_symbols(const std::string& library);

// On by default; TWINBENCH_NS3_FAST_PATHS=0 in the environment turns them off from the start, and
// TWINBENCH_NS3_FAST_PATHS_OFF=GROUP,... some groups only (scoreboard, create-option,
// construct-self, rng-stream, mac48-broadcast, checksum-enabled, bytes-tx-time).
// Off, each stand-in calls ns-3's own function, so a program runs stock ns-3 code (with the same
// results: tests/integration/ns3_fast_paths_cli_test.cpp); bench/sim_throughput measures ns-3's
// own BulkSend that way. Not to be switched while simulating.
void set_ns3_fast_paths(bool on);
bool ns3_fast_paths_on();

// The fast paths on or off for a scope, then as they were before (also when a test returns early).
class ScopedNs3FastPaths {
 public:
  explicit ScopedNs3FastPaths(bool on) : before_(ns3_fast_paths_on()) { set_ns3_fast_paths(on); }
  ~ScopedNs3FastPaths() { set_ns3_fast_paths(before_); }
  ScopedNs3FastPaths(const ScopedNs3FastPaths&) = delete;
  ScopedNs3FastPaths& operator=(const ScopedNs3FastPaths&) = delete;

 private:
  bool before_;
};

}  // namespace tb::ns3_fast_paths
