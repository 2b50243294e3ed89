// The ns-3 fast paths (ns3_fast_paths/) against ns-3's own functions. NextSeg on
// scoreboards a sender goes through: new data only, a window that stops it, no data left, a SACK
// hole marked lost, recovery's rule 3, and a whole flight marked lost after a timeout. Update on
// two buffers given the same history, one updated by ours and one by ns-3's: the same bytes
// reported, the same items handed to the callback, and the same scoreboard after every step.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <ns3/callback.h>
#include <ns3/boolean.h>
#include <ns3/config.h>
#include <ns3/global-value.h>
#include <ns3/node.h>
#include <ns3/object-factory.h>
#include <ns3/object.h>
#include <ns3/packet.h>
#include <ns3/rng-stream.h>
#include <ns3/uinteger.h>
#include <ns3/tcp-header.h>
#include <ns3/tcp-option-sack.h>
#include <ns3/tcp-option-ts.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/real_time.hpp"
#include "twinbench/ns3_fast_paths/fast_paths.hpp"

namespace tb::ns3_fast_paths {
namespace {

using ns3::SequenceNumber32;

constexpr uint32_t kSegment = 1000;

// What the PLT resolves `symbol` to (the first definition in the program's lookup order) is ours,
// not ns-3's `library` function; else every comparison with ns-3 would compare ns-3 with itself.
void expect_ours_is_called(const char* symbol, void* library) {
  void* resolved = dlsym(RTLD_DEFAULT, symbol);
  ASSERT_NE(resolved, nullptr) << symbol;
  EXPECT_NE(resolved, library) << symbol;
}

class NextSegTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (library_next_seg() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own NextSeg");
    buffer_->SetMaxBufferSize(1 << 20);
    buffer_->SetSegmentSize(kSegment);
    buffer_->SetDupAckThresh(3);
    buffer_->SetSackEnabled(true);
    buffer_->SetHeadSequence(SequenceNumber32(1));
    buffer_->SetRWndCallback(ns3::MakeCallback(&NextSegTest::window, this));
  }

  uint32_t window() const { return window_; }

  void send_segments(uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_NE(buffer_->CopyFromSequence(kSegment, next_), nullptr);
      next_ += kSegment;
    }
  }

  void sack(uint32_t first_segment, uint32_t end_segment) {
    ns3::TcpOptionSack::SackList blocks;
    blocks.emplace_back(SequenceNumber32(1 + first_segment * kSegment),
                        SequenceNumber32(1 + end_segment * kSegment));
    buffer_->Update(blocks);
  }

  // Both functions' answers, for recovery off and on; they must agree whatever they return.
  void expect_same_answers(const std::string& state) {
    for (const bool recovery : {false, true}) {
      SequenceNumber32 seq(7);
      SequenceNumber32 high(7);
      SequenceNumber32 library_seq(7);
      SequenceNumber32 library_high(7);
      const bool found = buffer_->NextSeg(&seq, &high, recovery);
      const bool library_found =
          library_next_seg()(ns3::PeekPointer(buffer_), &library_seq, &library_high, recovery);
      EXPECT_EQ(found, library_found) << state << ", recovery " << recovery;
      if (found && library_found) {
        EXPECT_EQ(seq, library_seq) << state << ", recovery " << recovery;
        EXPECT_EQ(high, library_high) << state << ", recovery " << recovery;
      }
    }
  }

  ns3::Ptr<ns3::TcpTxBuffer> buffer_ = ns3::CreateObject<ns3::TcpTxBuffer>();
  SequenceNumber32 next_{1};
  uint32_t window_ = 1 << 20;
};

TEST_F(NextSegTest, IsTheOneTheProgramCalls) {
  expect_ours_is_called(kNextSegSymbol, reinterpret_cast<void*>(library_next_seg()));
}

TEST_F(NextSegTest, OffersNewDataAsNs3DoesWhileNothingIsLost) {
  ASSERT_TRUE(buffer_->Add(ns3::Create<ns3::Packet>(50 * kSegment + 300)));
  send_segments(20);
  SequenceNumber32 seq;
  SequenceNumber32 high;
  ASSERT_TRUE(buffer_->NextSeg(&seq, &high, false));
  EXPECT_EQ(seq, SequenceNumber32(1 + 20 * kSegment));
  EXPECT_EQ(high, seq + kSegment);
  expect_same_answers("20 of 50 segments sent");

  window_ = 20 * kSegment + 400;  // room for 400 bytes only
  expect_same_answers("window 400 bytes beyond the flight");
  window_ = 20 * kSegment;
  expect_same_answers("window exactly full");
  window_ = 10 * kSegment;
  expect_same_answers("window below the flight");
  window_ = 1 << 20;

  send_segments(30);
  expect_same_answers("all but a partial segment sent");
  ASSERT_NE(buffer_->CopyFromSequence(300, next_), nullptr);
  EXPECT_FALSE(buffer_->NextSeg(&seq, &high, false));
  expect_same_answers("everything sent");
}

TEST_F(NextSegTest, LeavesLossRecoveryToNs3) {
  ASSERT_TRUE(buffer_->Add(ns3::Create<ns3::Packet>(40 * kSegment)));
  send_segments(20);
  sack(5, 10);  // segments 0..4 are a hole with five SACKed segments above: lost
  ASSERT_GT(buffer_->GetLost(), 0u);
  SequenceNumber32 seq;
  SequenceNumber32 high;
  ASSERT_TRUE(buffer_->NextSeg(&seq, &high, true));
  EXPECT_EQ(seq, SequenceNumber32(1));  // rule 1: the first lost segment, not new data
  expect_same_answers("a SACK hole");

  ASSERT_NE(buffer_->CopyFromSequence(kSegment, SequenceNumber32(1)), nullptr);  // retransmitted
  expect_same_answers("the hole's head retransmitted");

  buffer_->SetSentListLost(true);  // an RTO
  expect_same_answers("the flight lost after a timeout");
}

TEST_F(NextSegTest, AnswersAsNs3WithHeadMarkedLost) {
  ASSERT_TRUE(buffer_->Add(ns3::Create<ns3::Packet>(10 * kSegment)));
  send_segments(5);
  expect_same_answers("no loss");
  buffer_->MarkHeadAsLost();
  SequenceNumber32 seq;
  SequenceNumber32 high;
  ASSERT_TRUE(buffer_->NextSeg(&seq, &high, false));
  EXPECT_EQ(seq, SequenceNumber32(1));
  expect_same_answers("head marked lost");
}

// ---- Update ----

class SackUpdateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (library_update() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own Update");
    for (auto& buffer : {ours_, ns3_}) {
      buffer->SetMaxBufferSize(1 << 20);
      buffer->SetSegmentSize(kSegment);
      buffer->SetDupAckThresh(3);
      buffer->SetSackEnabled(true);
      buffer->SetHeadSequence(SequenceNumber32(1));
      ASSERT_TRUE(buffer->Add(ns3::Create<ns3::Packet>(60 * kSegment)));
    }
  }

  // Sends `bytes` at `offset` (from the first sequence number, 1) from both buffers; a
  // retransmission when below what was sent.
  void send(uint32_t offset, uint32_t bytes) {
    ASSERT_NE(ours_->CopyFromSequence(bytes, SequenceNumber32(1 + offset)), nullptr);
    ASSERT_NE(ns3_->CopyFromSequence(bytes, SequenceNumber32(1 + offset)), nullptr);
  }

  // Blocks in bytes from the first sequence number (1).
  void update(const std::vector<std::pair<uint32_t, uint32_t>>& blocks, const std::string& step) {
    ns3::TcpOptionSack::SackList list;
    for (const auto& [first, end] : blocks)
      list.emplace_back(SequenceNumber32(1 + first), SequenceNumber32(1 + end));
    std::ostringstream ours_items;
    std::ostringstream ns3_items;
    const uint32_t ours =
        ours_->Update(list, ns3::Callback<void, ns3::TcpTxItem*>(
                                [&](ns3::TcpTxItem* item) { item->Print(ours_items); }));
    const uint32_t theirs =
        library_update()(ns3::PeekPointer(ns3_), list,
                         ns3::Callback<void, ns3::TcpTxItem*>(
                             [&](ns3::TcpTxItem* item) { item->Print(ns3_items); }));
    EXPECT_EQ(ours, theirs) << step;
    EXPECT_EQ(ours_items.str(), ns3_items.str()) << step;
    expect_same_scoreboard(step);
  }

  void expect_same_scoreboard(const std::string& step) {
    std::ostringstream ours;
    std::ostringstream theirs;
    ours << *ours_;
    theirs << *ns3_;
    EXPECT_EQ(ours.str(), theirs.str()) << step;
    EXPECT_EQ(ours_->BytesInFlight(), ns3_->BytesInFlight()) << step;
    for (uint32_t seq = 1; seq < 1 + 60 * kSegment; seq += kSegment / 2) {
      EXPECT_EQ(ours_->IsLost(SequenceNumber32(seq)), ns3_->IsLost(SequenceNumber32(seq)))
          << step << ", seq " << seq;
    }
    // Whether a retransmitted item ends at each byte (our IsRetransmittedDataAcked on ns-3's
    // buffer against ns-3's own): item edges fall on segments, halves and uneven sizes.
    for (uint32_t seq = 0; seq < 1 + 62 * kSegment; seq += 100) {
      EXPECT_EQ(ns3_->IsRetransmittedDataAcked(SequenceNumber32(seq)),
                library_retransmitted_data_acked()(ns3::PeekPointer(ns3_), SequenceNumber32(seq)))
          << step << ", seq " << seq;
    }
  }

  ns3::Ptr<ns3::TcpTxBuffer> ours_ = ns3::CreateObject<ns3::TcpTxBuffer>();
  ns3::Ptr<ns3::TcpTxBuffer> ns3_ = ns3::CreateObject<ns3::TcpTxBuffer>();
};

TEST_F(SackUpdateTest, IsTheOneTheProgramCalls) {
  expect_ours_is_called(kUpdateSymbol, reinterpret_cast<void*>(library_update()));
  expect_ours_is_called(kRetransmittedDataAckedSymbol,
                        reinterpret_cast<void*>(library_retransmitted_data_acked()));
}

TEST_F(SackUpdateTest, MarksAsNs3DoesThroughARecovery) {
  for (uint32_t i = 0; i < 40; ++i) send(i * kSegment, kSegment);
  update({{5 * kSegment, 10 * kSegment}}, "one block: segments 0-4 a hole below five SACKed");
  ASSERT_GT(ours_->GetLost(), 0u);
  update({{12 * kSegment, 15 * kSegment}, {5 * kSegment, 10 * kSegment}},
         "a second hole, the old block repeated");
  update({{20 * kSegment, 25 * kSegment},
          {12 * kSegment, 16 * kSegment},
          {5 * kSegment, 11 * kSegment}},
         "three blocks, two grown");
  update({{30 * kSegment + 500, 33 * kSegment + 200}},
         "a block not on segment edges: whole segments only");
  update({{36 * kSegment, 38 * kSegment},
          {50 * kSegment, 52 * kSegment},
          {26 * kSegment, 28 * kSegment}},
         "a block beyond the data sent ends the update");
  update({{50 * kSegment, 52 * kSegment}}, "only a block beyond the data sent");
  update({{39 * kSegment, 40 * kSegment}}, "the last segment sent");

  send(0, kSegment);  // the hole's head retransmitted, then more new data
  send(2 * kSegment, kSegment);
  for (uint32_t i = 40; i < 45; ++i) send(i * kSegment, kSegment);
  update({{41 * kSegment, 45 * kSegment}, {20 * kSegment, 25 * kSegment}},
         "after a retransmission");
  EXPECT_TRUE(ours_->IsRetransmittedDataAcked(SequenceNumber32(1 + kSegment)));
  EXPECT_TRUE(ours_->IsRetransmittedDataAcked(SequenceNumber32(1 + 3 * kSegment)));
  EXPECT_FALSE(ours_->IsRetransmittedDataAcked(SequenceNumber32(1 + 2 * kSegment)));
}

// A long recovery: one hole, then a SACK block growing by a segment per ACK (each count of losses
// after the first stops where the items below are settled), partial ACKs, and each way ns-3
// unsettles items (Reno's SACK reset, a timeout's marking, the last segment taken back), with the
// same scoreboard as ns-3's own Update after every step.
TEST_F(SackUpdateTest, CountsLossesAsNs3DoesThroughResetsAndPartialAcks) {
  for (uint32_t i = 0; i < 50; ++i) send(i * kSegment, kSegment);
  const std::uint64_t cut_short = ns3_loss_counts_cut_short();
  const std::uint64_t walks_cut_short = ns3_block_walks_cut_short();
  for (uint32_t top = 4; top < 30; ++top)
    update({{2 * kSegment, top * kSegment}}, "block [2, " + std::to_string(top) + ")");
  EXPECT_GT(ns3_loss_counts_cut_short(), cut_short) << "counts stopped short of the head";
  EXPECT_GT(ns3_block_walks_cut_short(), walks_cut_short) << "walks from the highest SACKed item";
  send(0, kSegment);  // the lost head and segment 1 retransmitted
  send(kSegment, kSegment);
  update({{31 * kSegment, 33 * kSegment}, {2 * kSegment, 30 * kSegment}}, "a second hole at 30");
  for (auto& buffer : {ours_, ns3_}) buffer->DiscardUpTo(SequenceNumber32(1 + 2 * kSegment));
  expect_same_scoreboard("partial ACK up to the first block");
  update({{31 * kSegment, 36 * kSegment}}, "after the partial ACK");
  for (auto& buffer : {ours_, ns3_}) buffer->ResetRenoSack();
  expect_same_scoreboard("Reno's SACK reset");
  update({{31 * kSegment, 37 * kSegment}}, "SACKed again after the reset");
  update({{31 * kSegment, 40 * kSegment}}, "and grown");
  for (auto& buffer : {ours_, ns3_}) buffer->SetSentListLost(false);
  expect_same_scoreboard("a timeout keeping SACKs");
  update({{31 * kSegment, 42 * kSegment}}, "after the timeout");
  for (auto& buffer : {ours_, ns3_}) buffer->SetSentListLost(true);
  expect_same_scoreboard("a timeout dropping SACKs");
  update({{31 * kSegment, 43 * kSegment}}, "the same block grown after the timeout");
  update({{40 * kSegment, 44 * kSegment}}, "another block");
  for (auto& buffer : {ours_, ns3_}) buffer->ResetLastSegmentSent();
  expect_same_scoreboard("the last segment taken back");
  send(49 * kSegment, kSegment);
  update({{40 * kSegment, 46 * kSegment}}, "sent again");
  update({{40 * kSegment, 50 * kSegment}}, "up to the end");
}

TEST_F(SackUpdateTest, MarksAsNs3DoesWithUnevenItemsAndAnAdvancedHead) {
  // Items of different sizes (partial segments, a segment sent in two pieces), then the head
  // ACKed so that the sent list starts above the first sequence number.
  uint32_t offset = 0;
  for (const uint32_t bytes :
       {1000u, 300u, 700u, 1000u, 1000u, 200u, 800u, 1000u, 1000u, 1000u, 1000u, 1000u}) {
    send(offset, bytes);
    offset += bytes;
  }
  update({{1300, 3000}}, "a block covering uneven items");
  update({{4200, 6000}, {3000, 4000}}, "blocks starting inside items");
  for (auto& buffer : {ours_, ns3_}) buffer->DiscardUpTo(SequenceNumber32(1 + 1000));
  expect_same_scoreboard("head ACKed");
  update({{500, 2000}, {7000, 9000}}, "a block starting below the head");
  update({{9000, 10000}}, "the last item");
  update({}, "no blocks");
}

// ---- CreateOption ----

TEST(CreateOptionTest, IsTheOneTheProgramCalls) {
  if (library_create_option() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own CreateOption");
  expect_ours_is_called(kCreateOptionSymbol, reinterpret_cast<void*>(library_create_option()));
}

TEST(CreateOptionTest, MakesTheClassNs3MakesForEveryKind) {
  if (library_create_option() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own CreateOption");
  for (unsigned kind = 0; kind < 256; ++kind) {
    const auto ours = ns3::TcpOption::CreateOption(static_cast<uint8_t>(kind));
    const auto theirs = library_create_option()(static_cast<uint8_t>(kind));
    ASSERT_NE(ours, nullptr) << kind;
    ASSERT_NE(theirs, nullptr) << kind;
    EXPECT_EQ(ours->GetInstanceTypeId(), theirs->GetInstanceTypeId()) << kind;
    EXPECT_EQ(ours->GetKind(), theirs->GetKind()) << kind;
    EXPECT_EQ(ours->GetSerializedSize(), theirs->GetSerializedSize()) << kind;
  }
}

// A data segment's header with a timestamp option (padded by END to a 32-bit boundary, as ns-3
// sends it), in a packet.
ns3::Ptr<ns3::Packet> segment_with_timestamp(uint32_t timestamp, uint32_t echo) {
  ns3::TcpHeader header;
  header.SetSourcePort(80);
  header.SetDestinationPort(4242);
  header.SetSequenceNumber(SequenceNumber32(1000));
  header.SetAckNumber(SequenceNumber32(2000));
  header.SetFlags(ns3::TcpHeader::ACK);
  header.SetWindowSize(512);
  const auto ts = ns3::CreateObject<ns3::TcpOptionTS>();
  ts->SetTimestamp(timestamp);
  ts->SetEcho(echo);
  header.AppendOption(ts);
  auto packet = ns3::Create<ns3::Packet>(100);
  packet->AddHeader(header);
  return packet;
}

std::string printed(const ns3::TcpHeader& header) {
  std::ostringstream out;
  header.Print(out);
  return out.str();
}

// Each header read as ns-3 reads a received segment's (three reads alive at once), then more
// segments once those reads are gone: what ns-3's own CreateOption gives, field for field.
std::vector<std::string> headers_read() {
  std::vector<std::string> seen;
  for (uint32_t round = 0; round < 3; ++round) {
    const auto packet = segment_with_timestamp(100 + round, 7 * round);
    ns3::TcpHeader peeked;
    packet->PeekHeader(peeked);
    ns3::TcpHeader peeked_again;
    packet->PeekHeader(peeked_again);
    ns3::TcpHeader removed;
    packet->RemoveHeader(removed);
    for (const auto* header : {&peeked, &peeked_again, &removed}) {
      seen.push_back(printed(*header));
      const auto ts =
          ns3::DynamicCast<const ns3::TcpOptionTS>(header->GetOption(ns3::TcpOption::TS));
      seen.push_back(ts ? std::to_string(ts->GetTimestamp()) + "/" + std::to_string(ts->GetEcho())
                        : "no timestamp");
    }
  }
  return seen;
}

TEST(CreateOptionTest, HeadersReadWithOptionsHandedOutAgainAreNs3s) {
  if (library_create_option() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own CreateOption");
  const std::uint64_t reused = ns3_tcp_options_reused();
  const auto ours = headers_read();
  EXPECT_GT(ns3_tcp_options_reused(), reused) << "ns-3's TcpHeader::Deserialize reaches ours";
  const auto theirs = [] {
    const ScopedNs3FastPaths off(false);
    return headers_read();
  }();
  EXPECT_EQ(ours, theirs);
  EXPECT_EQ(ours[1], "100/0");
  EXPECT_EQ(ours.back(), "102/14");
}

TEST(CreateOptionTest, ATimestampOptionStillHeldIsNotHandedOut) {
  if (library_create_option() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own CreateOption");
  std::vector<ns3::Ptr<ns3::TcpOption>> held;
  for (int i = 0; i < 20; ++i) {  // more than the reused ones
    held.push_back(ns3::TcpOption::CreateOption(ns3::TcpOption::TS));
    auto ts = ns3::DynamicCast<ns3::TcpOptionTS>(held.back());
    ASSERT_NE(ts, nullptr);
    EXPECT_EQ(ts->GetTimestamp(), 0u) << "as new";
    EXPECT_EQ(ts->GetEcho(), 0u);
    ts->SetTimestamp(1000 + i);
    ts->SetEcho(i);
  }
  for (std::size_t i = 0; i < held.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) EXPECT_NE(held[i], held[j]);
    EXPECT_EQ(ns3::DynamicCast<ns3::TcpOptionTS>(held[i])->GetTimestamp(), 1000 + i);
  }
  held.clear();
  const auto again =
      ns3::DynamicCast<ns3::TcpOptionTS>(ns3::TcpOption::CreateOption(ns3::TcpOption::TS));
  EXPECT_EQ(again->GetTimestamp(), 0u) << "a released one, set back";
  EXPECT_EQ(again->GetEcho(), 0u);
}

// ---- ConstructSelf ----

// A type without attributes that records that its construction completed.
class Bare : public ns3::Object {
 public:
  static ns3::TypeId GetTypeId() {
    static const ns3::TypeId tid =
        ns3::TypeId("tb::ns3_fast_paths::test::Bare").SetParent<ns3::Object>().AddConstructor<Bare>();
    return tid;
  }
  bool completed = false;

 protected:
  void NotifyConstructionCompleted() override { completed = true; }
};

// A type with an attribute, and a child adding none: the child's chain still has one to set.
class WithValue : public ns3::Object {
 public:
  static ns3::TypeId GetTypeId() {
    static const ns3::TypeId tid = ns3::TypeId("tb::ns3_fast_paths::test::WithValue")
                                       .SetParent<ns3::Object>()
                                       .AddConstructor<WithValue>()
                                       .AddAttribute("Value", "a number", ns3::UintegerValue(7),
                                                     ns3::MakeUintegerAccessor(&WithValue::value),
                                                     ns3::MakeUintegerChecker<uint32_t>());
    return tid;
  }
  uint32_t value = 0;
};

// An attribute that construction leaves alone (not ATTR_CONSTRUCT): the member keeps its own value.
class WithLateValue : public ns3::Object {
 public:
  static ns3::TypeId GetTypeId() {
    static const ns3::TypeId tid =
        ns3::TypeId("tb::ns3_fast_paths::test::WithLateValue")
            .SetParent<ns3::Object>()
            .AddConstructor<WithLateValue>()
            .AddAttribute("Late", "set after construction only",
                          ns3::TypeId::ATTR_GET | ns3::TypeId::ATTR_SET, ns3::UintegerValue(5),
                          ns3::MakeUintegerAccessor(&WithLateValue::late),
                          ns3::MakeUintegerChecker<uint32_t>())
            .AddAttribute("Early", "set at construction", ns3::UintegerValue(6),
                          ns3::MakeUintegerAccessor(&WithLateValue::early),
                          ns3::MakeUintegerChecker<uint32_t>());
    return tid;
  }
  uint32_t late = 1;
  uint32_t early = 2;
};

class ChildOfWithValue : public WithValue {
 public:
  static ns3::TypeId GetTypeId() {
    static const ns3::TypeId tid = ns3::TypeId("tb::ns3_fast_paths::test::ChildOfWithValue")
                                       .SetParent<WithValue>()
                                       .AddConstructor<ChildOfWithValue>();
    return tid;
  }
};

// Constructions whose outcome shows whether attributes were set: run with the fast paths on and
// off (off, ns-3's own ConstructSelf runs), they must agree.
void expect_constructed_as_ns3_does() {
  EXPECT_TRUE(ns3::CreateObject<Bare>()->completed);
  EXPECT_TRUE(ns3::CreateObject<Bare>()->completed);  // the second, from what ours remembers
  EXPECT_EQ(ns3::CreateObject<WithValue>()->value, 7u);
  EXPECT_EQ(ns3::CreateObject<ChildOfWithValue>()->value, 7u);  // the parent's attribute
  ns3::Config::SetDefault("tb::ns3_fast_paths::test::WithValue::Value", ns3::UintegerValue(9));
  EXPECT_EQ(ns3::CreateObject<ChildOfWithValue>()->value, 9u);
  ns3::Config::SetDefault("tb::ns3_fast_paths::test::WithValue::Value", ns3::UintegerValue(7));
  ns3::ObjectFactory factory("tb::ns3_fast_paths::test::ChildOfWithValue");
  factory.Set("Value", ns3::UintegerValue(11));  // given at construction
  EXPECT_EQ(factory.Create<ChildOfWithValue>()->value, 11u);
  const auto late = ns3::CreateObject<WithLateValue>();
  EXPECT_EQ(late->late, 1u) << "not set at construction";
  EXPECT_EQ(late->early, 6u);
}

TEST(ConstructSelfTest, IsTheOneTheProgramCalls) {
  if (library_construct_self() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own ConstructSelf");
  expect_ours_is_called(kConstructSelfSymbol, reinterpret_cast<void*>(library_construct_self()));
}

TEST(ConstructSelfTest, SetsAttributesAndCompletesConstructionAsNs3Does) {
  if (library_construct_self() == nullptr) TB_CANNOT_JUDGE("this ns-3 keeps its own ConstructSelf");
  ASSERT_TRUE(ns3_fast_paths_on());
  const std::uint64_t skipped = ns3_constructions_skipped();
  const std::uint64_t set_quietly = ns3_constructions_set_quietly();
  expect_constructed_as_ns3_does();
  // ns-3's Object::Construct (in libns3-core) reached ours for the types without attributes, and
  // ours set the others' attributes.
  EXPECT_GE(ns3_constructions_skipped(), skipped + 2);
  EXPECT_GE(ns3_constructions_set_quietly(), set_quietly + 5);
  const ScopedNs3FastPaths off(false);
  const std::uint64_t skipped_before_off = ns3_constructions_skipped();
  const std::uint64_t set_quietly_before_off = ns3_constructions_set_quietly();
  expect_constructed_as_ns3_does();
  EXPECT_EQ(ns3_constructions_skipped(), skipped_before_off);  // ns-3's own, every time
  EXPECT_EQ(ns3_constructions_set_quietly(), set_quietly_before_off);
}

TEST(ScopedNs3FastPathsTest, PutsBackWhatWasSet) {
  ASSERT_TRUE(ns3_fast_paths_on());
  {
    const ScopedNs3FastPaths off(false);
    EXPECT_FALSE(ns3_fast_paths_on());
    {
      const ScopedNs3FastPaths on(true);
      EXPECT_TRUE(ns3_fast_paths_on());
    }
    EXPECT_FALSE(ns3_fast_paths_on());
  }
  EXPECT_TRUE(ns3_fast_paths_on());
}

// ---- Mac48Address ----

TEST(Mac48AddressTest, ReadsTextAsNs3Does) {
  if (library_mac48_address_from_text() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own Mac48Address constructor");
  expect_ours_is_called(kMac48AddressFromTextSymbol,
                        reinterpret_cast<void*>(library_mac48_address_from_text()));
  for (const char* text : {"ff:ff:ff:ff:ff:ff", "FF:FF:FF:FF:FF:FF", "00:00:00:00:00:01",
                           "01:00:5e:00:00:fb", "ff:ff:ff:ff:ff:fe"}) {
    const ns3::Mac48Address ours(text);
    ns3::Mac48Address theirs;
    library_mac48_address_from_text()(&theirs, text);
    EXPECT_EQ(ours, theirs) << text;
  }
  EXPECT_EQ(ns3::Mac48Address("ff:ff:ff:ff:ff:ff"), ns3::Mac48Address::GetBroadcast());
  EXPECT_TRUE(ns3::Mac48Address("ff:ff:ff:ff:ff:ff").IsBroadcast());
}

// ---- Node::ChecksumEnabled ----

ns3::GlobalValue* checksum_global() {
  for (auto it = ns3::GlobalValue::Begin(); it != ns3::GlobalValue::End(); ++it)
    if ((*it)->GetName() == "ChecksumEnabled") return *it;
  return nullptr;
}

// Every way the global value changes, asked about twice after each (the second answer is the
// remembered one): ours answers as ns-3's own, which reads the value every time.
TEST(ChecksumEnabledTest, FollowsEveryWayTheGlobalValueChanges) {
  if (library_checksum_enabled() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own Node::ChecksumEnabled");
  expect_ours_is_called(kChecksumEnabledSymbol,
                        reinterpret_cast<void*>(library_checksum_enabled()));
  ns3::GlobalValue* global = checksum_global();
  ASSERT_NE(global, nullptr);
  const auto expect_answers = [](bool expected, const char* after) {
    for (int ask = 0; ask < 2; ++ask) {
      EXPECT_EQ(ns3::Node::ChecksumEnabled(), expected) << after;
      EXPECT_EQ(library_checksum_enabled()(), expected) << after;
    }
  };
  expect_answers(false, "ns-3's default");
  const std::uint64_t changes = ns3_global_value_changes();
  ns3::Config::SetGlobal("ChecksumEnabled", ns3::BooleanValue(true));
  EXPECT_GT(ns3_global_value_changes(), changes)
      << "Config::SetGlobal (in libns3-core) reaches ours";
  expect_answers(true, "Config::SetGlobal");
  ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(false));
  expect_answers(false, "GlobalValue::Bind");
  ASSERT_TRUE(ns3::GlobalValue::BindFailSafe("ChecksumEnabled", ns3::BooleanValue(true)));
  expect_answers(true, "GlobalValue::BindFailSafe");
  ASSERT_TRUE(global->SetValue(ns3::BooleanValue(false)));
  expect_answers(false, "GlobalValue::SetValue");
  ASSERT_TRUE(global->SetValue(ns3::BooleanValue(true)));
  expect_answers(true, "GlobalValue::SetValue again");
  global->ResetInitialValue();
  expect_answers(false, "GlobalValue::ResetInitialValue");
}

// ---- DataRate::CalculateBytesTxTime ----

TEST(CalculateBytesTxTimeTest, IsTheOneTheProgramCalls) {
  if (library_calculate_bytes_tx_time() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own CalculateBytesTxTime");
  expect_ours_is_called(kCalculateBytesTxTimeSymbol,
                        reinterpret_cast<void*>(library_calculate_bytes_tx_time()));
}

// Rates and sizes as links and pacing give them, more pairs than ours remembers, each asked for
// twice in a row in three rounds, so that remembered answers are found and displaced: every
// answer is ns-3's own, and at least one of each two came from what ours remembered.
TEST(CalculateBytesTxTimeTest, AnswersAsNs3DoesForEveryRateAndSize) {
  if (library_calculate_bytes_tx_time() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own CalculateBytesTxTime");
  const std::uint64_t remembered = ns3_tx_times_remembered();
  const std::vector<std::uint64_t> rates{1'000'000'000, 100'000'000, 20'000'000,
                                         7'777'777,     1,           123'456'789'012};
  const std::vector<std::uint32_t> sizes{0, 1, 52, 64, 1500, 1448, 65535, 4'000'000'000u};
  int asked = 0;
  for (int round = 0; round < 3; ++round) {
    for (std::uint64_t bps : rates) {
      const ns3::DataRate rate(bps);
      for (std::uint32_t bytes : sizes) {
        const ns3::Time theirs = library_calculate_bytes_tx_time()(&rate, bytes);
        for (int again = 0; again < 2; ++again) {  // the second one at least is remembered
          ASSERT_EQ(rate.CalculateBytesTxTime(bytes).GetTimeStep(), theirs.GetTimeStep())
              << bps << " bit/s, " << bytes << " B";
          ++asked;
        }
      }
    }
  }
  EXPECT_GE(ns3_tx_times_remembered() - remembered, static_cast<std::uint64_t>(asked / 2));
  EXPECT_LT(ns3_tx_times_remembered() - remembered, static_cast<std::uint64_t>(asked));
  // With the fast paths off, ns-3's own answers every time.
  const ScopedNs3FastPaths off(false);
  const std::uint64_t before = ns3_tx_times_remembered();
  const ns3::DataRate link(100'000'000);
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(link.CalculateBytesTxTime(1500), ns3::MicroSeconds(120));  // 12000 bits at 100 Mbit/s
  EXPECT_EQ(ns3_tx_times_remembered(), before);
}

// ---- RngStream ----

TEST(RngStreamTest, IsTheOneTheProgramCalls) {
  if (library_rng_stream_constructor() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own RngStream constructor");
  expect_ours_is_called(kRngStreamConstructorSymbol,
                        reinterpret_cast<void*>(library_rng_stream_constructor()));
}

// Streams as ns-3 numbers them (automatic ones from 0, AssignStreams' from 2^63) on substreams as
// twinbench's seeds give them (splitmix64 output, ~32 set bits), with the substream changing
// between constructions and staying: every stream draws what ns-3's own constructor's draws.
TEST(RngStreamTest, DrawsWhatNs3DrawsOnEveryStreamAndSubstream) {
  if (library_rng_stream_constructor() == nullptr)
    TB_CANNOT_JUDGE("this ns-3 keeps its own RngStream constructor");
  const std::uint64_t reused = ns3_rng_substream_starts_reused();
  int constructions = 0;
  for (std::uint32_t seed : {1u, 12345u, 4294944442u}) {
    for (std::uint64_t substream :
         {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{0x9e3779b97f4a7c15},
          std::uint64_t{0xd1b54a32d192ed03}, (std::uint64_t{1} << 63) | 5}) {
      for (std::uint64_t stream :
           {std::uint64_t{0}, std::uint64_t{7}, std::uint64_t{1000}, (std::uint64_t{1} << 63) + 10,
            (std::uint64_t{1} << 63) + 1005, ~std::uint64_t{0}}) {
        ns3::RngStream ours(seed, stream, substream);
        alignas(ns3::RngStream) unsigned char storage[sizeof(ns3::RngStream)];
        auto* theirs = reinterpret_cast<ns3::RngStream*>(storage);
        library_rng_stream_constructor()(theirs, seed, stream, substream);
        for (int draw = 0; draw < 4; ++draw) {
          ASSERT_EQ(ours.RandU01(), theirs->RandU01())
              << "seed " << seed << " stream " << stream << " substream " << substream << " draw "
              << draw;
        }
        ++constructions;
      }
    }
  }
  // All but the first stream of each (seed, substream) started from the remembered state.
  EXPECT_EQ(ns3_rng_substream_starts_reused() - reused,
            static_cast<std::uint64_t>(constructions - 15));
}

// ns-3's own callers reach every stand-in: each library that calls one (in ns-3.37's sources)
// does so through a dynamic relocation, so none of its calls is bound past ours.
TEST(Ns3FastPathReach, NsThreesOwnCallersReachEveryStandIn) {
  EXPECT_EQ(ns3_fast_paths_unreached(), std::vector<std::string>{});
  for (const auto path :
       {Ns3FastPath::kScoreboard, Ns3FastPath::kCreateOption, Ns3FastPath::kConstructSelf,
        Ns3FastPath::kRngStream, Ns3FastPath::kMac48Broadcast, Ns3FastPath::kChecksumEnabled,
        Ns3FastPath::kBytesTxTime})
    EXPECT_TRUE(ns3_fast_path_on(path)) << static_cast<int>(path);
  const ScopedNs3FastPaths off(false);
  EXPECT_FALSE(ns3_fast_path_on(Ns3FastPath::kScoreboard));
}

// The relocation reader tells a function the library calls through its PLT (NextSeg, called by
// TcpSocketBase) from one it never calls (ResetSentList, which nothing in libns3-internet calls).
TEST(Ns3FastPathReach, TheRelocationReaderSeesWhatALibraryCallsThroughItsPlt) {
  const auto internet = ns3_relocated_symbols("libns3-internet.so");
  EXPECT_GT(internet.size(), 100u);
  EXPECT_TRUE(internet.count(kNextSegSymbol));
  EXPECT_TRUE(internet.count(kChecksumEnabledSymbol));  // Node is in libns3-network
  EXPECT_FALSE(internet.count(kResetSentListSymbol));
  EXPECT_TRUE(ns3_relocated_symbols("libns3-core.so").count(kConstructSelfSymbol));
  EXPECT_TRUE(ns3_relocated_symbols("libno-such-library.so").empty());
}

}  // namespace
}  // namespace tb::ns3_fast_paths
