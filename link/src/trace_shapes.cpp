#include "twinbench/link/trace_shapes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "twinbench/scenario/delivery_trace.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/scenario/seeds.hpp"

namespace tb::link {
namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw InputError("trace shape: " + what);
}

// Uniform in [0, 1) from SplitMix64's n-th output for `seed`.
double uniform(std::uint64_t seed, std::uint64_t n) {
  return static_cast<double>(scenario::splitmix64(scenario::splitmix64(seed) + n) >> 11) *
         0x1.0p-53;
}

}  // namespace

std::vector<double> rate_per_ms(const TraceShape& s) {
  require(s.duration_ms > 0, "duration_ms must be over 0");
  std::vector<double> out(s.duration_ms);
  switch (s.kind) {
    case ShapeKind::kSteps: {
      require(!s.step_mbps.empty(), "steps need at least one rate");
      require(s.step_ms >= 1, "step_ms must be at least 1");
      for (const double r : s.step_mbps) require(r >= 0, fmt::format("a step's rate {} < 0", r));
      for (std::uint32_t ms = 0; ms < s.duration_ms; ++ms)
        out[ms] = s.step_mbps[static_cast<std::size_t>(ms / s.step_ms) % s.step_mbps.size()];
      break;
    }
    case ShapeKind::kWalk: {
      require(s.min_mbps >= 0 && s.min_mbps <= s.max_mbps, "need 0 <= min_mbps <= max_mbps");
      require(s.walk_step_mbps >= 0, "walk_step_mbps must be >= 0");
      require(s.outage_every_ms == 0 || s.outage_every_ms >= s.outage_ms,
              "outage_every_ms must be 0 or at least outage_ms");
      double rate = (s.min_mbps + s.max_mbps) / 2;
      std::uint64_t draw = 0;
      double outage_left = 0;
      for (std::uint32_t ms = 0; ms < s.duration_ms; ++ms) {
        if (ms % 100 == 0) {  // the walk moves every 100 ms, reflected at its bounds
          rate += (2 * uniform(s.seed, draw++) - 1) * s.walk_step_mbps;
          if (rate > s.max_mbps) rate = 2 * s.max_mbps - rate;
          if (rate < s.min_mbps) rate = 2 * s.min_mbps - rate;
          rate = std::clamp(rate, s.min_mbps, s.max_mbps);
          // An outage starts in this 100 ms with the probability that gives one per
          // outage_every_ms on average.
          if (s.outage_every_ms > 0 && outage_left <= 0 &&
              uniform(s.seed, draw++) < 100 / s.outage_every_ms)
            outage_left = s.outage_ms;
        }
        out[ms] = outage_left > 0 ? 0 : rate;
        outage_left -= 1;
      }
      break;
    }
    case ShapeKind::kFade: {
      require(s.min_mbps >= 0 && s.min_mbps <= s.max_mbps, "need 0 <= min_mbps <= max_mbps");
      require(s.period_ms >= 2, "period_ms must be at least 2");
      for (std::uint32_t ms = 0; ms < s.duration_ms; ++ms) {
        const double phase = (ms % static_cast<std::uint64_t>(s.period_ms)) / s.period_ms;
        const double depth = phase < 0.5 ? 2 * phase : 2 * (1 - phase);  // 0 -> 1 -> 0
        out[ms] = s.max_mbps - depth * (s.max_mbps - s.min_mbps);
      }
      break;
    }
  }
  return out;
}

std::vector<std::uint32_t> opportunities_for(const std::vector<double>& mbps_per_ms) {
  std::vector<std::uint32_t> out;
  double bytes = 0;
  for (std::size_t ms = 0; ms < mbps_per_ms.size(); ++ms) {
    bytes += mbps_per_ms[ms] * 1e6 / 8 / 1000;
    for (; bytes >= scenario::kTraceOpportunityBytes; bytes -= scenario::kTraceOpportunityBytes)
      out.push_back(static_cast<std::uint32_t>(ms + 1));
  }
  const auto last = static_cast<std::uint32_t>(mbps_per_ms.size());
  if (out.empty() || out.back() != last) out.push_back(last);
  return out;
}

std::string trace_text(const std::vector<std::uint32_t>& opportunities_ms) {
  std::string out;
  out.reserve(opportunities_ms.size() * 6);
  for (const std::uint32_t ms : opportunities_ms)
    fmt::format_to(std::back_inserter(out), "{}\n", ms);
  return out;
}

}  // namespace tb::link
