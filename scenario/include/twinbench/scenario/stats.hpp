// Summary statistics of one cell's measurements, with the published run's quantile method.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tb::scenario {

struct Summary {
  std::size_t n;
  double min, q1, median, q3, max, p95, p99, mean;
};

// Quantile q in [0, 1] of ascending values, linearly interpolated at position q*(n-1) (the
// published method; numpy's default "linear"). Throws std::invalid_argument if empty.
double quantile_sorted(std::span<const double> sorted, double q);

// Throws std::invalid_argument for empty input or non-finite values.
Summary summarize(std::vector<double> values);

}  // namespace tb::scenario
