#include "twinbench/scenario/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace tb::scenario {

double quantile(std::size_t n, double q, const std::function<double(std::size_t)>& ranked) {
  if (n == 0) throw std::invalid_argument("quantile of no values");
  if (!(q >= 0.0 && q <= 1.0)) throw std::invalid_argument("quantile outside [0, 1]");
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  if (lo + 1 >= n) return ranked(n - 1);
  const double low = ranked(lo);
  return low + (pos - static_cast<double>(lo)) * (ranked(lo + 1) - low);
}

double quantile_sorted(std::span<const double> sorted, double q) {
  return quantile(sorted.size(), q, [&](std::size_t i) { return sorted[i]; });
}

Summary summarize(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("summary of no values");
  if (!std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }))
    throw std::invalid_argument("summary of a non-finite value");
  std::sort(values.begin(), values.end());
  const auto q = [&](double p) { return quantile_sorted(values, p); };
  return Summary{
      .n = values.size(),
      .min = values.front(),
      .q1 = q(0.25),
      .median = q(0.5),
      .q3 = q(0.75),
      .max = values.back(),
      .p95 = q(0.95),
      .p99 = q(0.99),
      .mean =
          std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()),
  };
}

}  // namespace tb::scenario
