#include "twinbench/verdicts/criterion.hpp"

#include <algorithm>
#include <cmath>

namespace tb::verdicts {

double frame_ms(const twinbench::Scenario& scenario, std::uint32_t fps) {
  return fps > 0 ? 1000.0 / fps : scenario.frame_loop().frame_work_ms();
}

double allowed(double reference, double frame, const Tolerance& tolerance) {
  return std::max(tolerance.frames * frame, tolerance.percent / 100 * std::fabs(reference));
}

bool within(double difference, double reference, double frame, const Tolerance& tolerance) {
  return std::fabs(difference) <= allowed(reference, frame, tolerance) + 1e-9;
}

}  // namespace tb::verdicts
