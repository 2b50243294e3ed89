// The simulated path on links that change over time: Mahimahi delivery traces and delay and loss
// schedules, through the link model both twins share (link/). Times from the fixture's bench.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "tcp_fixture.hpp"

namespace tb::sim {
namespace {

using namespace test;

// One opportunity a ms from `from` to `to` ms: 1504 bytes a ms, 12.032 Mbit/s.
std::vector<std::uint32_t> ms_range(std::uint32_t from, std::uint32_t to) {
  std::vector<std::uint32_t> out(to - from + 1);
  std::iota(out.begin(), out.end(), from);
  return out;
}

twinbench::Network traced_downlink(const std::vector<std::uint32_t>& trace) {
  auto n = with_server_nodelay(path());
  auto* t = n.mutable_link()->mutable_downlink_trace();
  for (const std::uint32_t ms : trace) t->add_opportunities_ms(ms);
  return n;
}

constexpr double kTraceMbps = 12.032;  // ms_range's rate

TEST(SimTraceLink, AConstantRateTraceTakesTheTimeOfTheEqualConstantLinkWithinItsQuantisation) {
  // Each packet leaves at most 1 ms (the format's resolution) after it would on the constant link,
  // never earlier: a download's time moves by at most that ms per round trip in which the queue
  // ran empty, here within 1 ms in all for a transfer the bottleneck keeps busy.
  auto constant = with_server_nodelay(path());
  constant.mutable_link()->set_downlink_mbps(kTraceMbps);
  for (const std::uint64_t bytes : {std::uint64_t{100} << 10, std::uint64_t{1} << 20}) {
    const double on_trace = download_ms(traced_downlink(ms_range(1, 1000)), 1, bytes);
    const double on_constant = download_ms(constant, 1, bytes);
    EXPECT_GE(on_trace, on_constant - 1) << bytes;
    EXPECT_LE(on_trace, on_constant + 6) << bytes;
  }
}

TEST(SimTraceLink, ATraceLoopsForAsLongAsTheTransferLasts) {
  // One opportunity at the 10th ms of each 10 ms (1.2032 Mbit/s): 200 KiB takes ~1.4 s, 140 loops
  // of the trace, as long as on a constant link of that rate.
  auto constant = with_server_nodelay(path());
  constant.mutable_link()->set_downlink_mbps(kTraceMbps / 10);
  const double on_trace = download_ms(traced_downlink({10}), 1, 200 << 10);
  const double on_constant = download_ms(constant, 1, 200 << 10);
  EXPECT_GT(on_trace, 1300);
  EXPECT_NEAR(on_trace, on_constant, 20);
}

// 4 MiB on the 12 Mbit/s trace, with and without 300 ms in which the link does nothing, mid-way
// through the transfer (the connection is up at ~80 ms; the body takes ~2.9 s).
TEST(SimTraceLink, AnOutageDelaysADownloadByItsLengthPlusWhatTheRetransmissionTimerAdds) {
  const std::uint64_t body = 4u << 20;
  const double base = download_ms(traced_downlink(ms_range(1, 4000)), 1, body);
  std::vector<std::uint32_t> gap = ms_range(1, 1000);
  const auto after = ms_range(1301, 4000);
  gap.insert(gap.end(), after.begin(), after.end());
  const double with_outage = download_ms(traced_downlink(gap), 1, body);
  // The queue holds what was sent; nothing is lost, but no ACK comes back for 300 ms, so the
  // retransmission timer (min RTO 200 ms) fires in the outage: slow start begins again from one
  // segment, and the model resends what was still queued (ns-3 has no F-RTO to find the timeout
  // spurious; docs/tcp-model.md), which the link must carry again: up to its 100-packet queue,
  // 100 ms at 12 Mbit/s, and the rounds of slow start back to the rate.
  EXPECT_GE(with_outage - base, 300 - 1);
  EXPECT_LE(with_outage - base, 300 + 100 + 8 * kRttMs) << base << " -> " << with_outage;
}

TEST(SimTraceLink, AHandoverThatDropsEverythingCostsTheOutageAndTheTimersBackoff) {
  const std::uint64_t body = 4u << 20;
  auto n = with_server_nodelay(path(kRttMs / 2, kTraceMbps));
  const double base = download_ms(n, 1, body);
  auto* loss = n.mutable_link();
  auto* start = loss->add_loss_schedule();
  start->set_at_ms(1000);
  start->set_value(1.0);
  auto* end = loss->add_loss_schedule();
  end->set_at_ms(1300);
  end->set_value(0.0);
  const double with_outage = download_ms(n, 1, body);
  // Everything sent in the outage is lost: the first RTO fires ~200 ms after the last ACK, its
  // retransmission is lost too, the backed-off second (400 ms later) gets through.
  EXPECT_GE(with_outage - base, 300);
  EXPECT_LE(with_outage - base, 300 + 200 + 400 + 2 * kRttMs);
}

TEST(SimTraceLink, TheSameSeedGivesTheSameTimesWithRandomLossOnASchedule) {
  auto n = traced_downlink(ms_range(1, 1000));
  n.mutable_link()->set_jitter_ms(2);
  auto* step = n.mutable_link()->add_loss_schedule();
  step->set_at_ms(0);
  step->set_value(0.01);
  const double first = download_ms(n, 7, 1 << 20);
  EXPECT_EQ(download_ms(n, 7, 1 << 20), first);
}

}  // namespace
}  // namespace tb::sim
