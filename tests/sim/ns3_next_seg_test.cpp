// The NextSeg fast path (sim/src/ns3_next_seg.cpp) against ns-3's own TcpTxBuffer::NextSeg, on
// scoreboards a sender goes through: new data only, a window that stops it, no data left, a SACK
// hole marked lost, recovery's rule 3, and a whole flight marked lost after a timeout.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <ns3/callback.h>
#include <ns3/packet.h>
#include <ns3/tcp-option-sack.h>

#include <string>

#include "twinbench/sim/ns3_next_seg.hpp"

namespace tb::sim {
namespace {

using ns3::SequenceNumber32;

constexpr uint32_t kSegment = 1000;

class NextSegTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (library_next_seg() == nullptr) GTEST_SKIP() << "this ns-3 keeps its own NextSeg";
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
    blocks.emplace_back(SequenceNumber32(1 + first_segment * kSegment), SequenceNumber32(1 + end_segment * kSegment));
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
      const bool library_found = library_next_seg()(ns3::PeekPointer(buffer_), &library_seq, &library_high, recovery);
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
  // What the PLT resolves to (the first definition in the program's lookup order) is ours, not
  // ns-3's; else every comparison below would compare ns-3 with itself.
  void* resolved = dlsym(RTLD_DEFAULT, kNextSegSymbol);
  ASSERT_NE(resolved, nullptr);
  EXPECT_NE(resolved, reinterpret_cast<void*>(library_next_seg()));
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

}  // namespace
}  // namespace tb::sim
