// Summary statistics of one cell's measurements, with the published run's quantile method.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tb::scenario {

struct Summary {
  std::size_t n;
  double min, q1, median, q3, max, p95, p99, mean;
};

// twinbench's one quantile: q in [0, 1] of n values is the value at position q*(n-1) of the
// values in ascending order, interpolated linearly between the two ranks around it (the
// published run's method; numpy's default "linear", Hyndman and Fan's type 7). Every quantile
// twinbench reports uses it: cell summaries, the emulator's packet lateness, the live client's
// wake-up lateness. Throws std::invalid_argument if n is 0 or q is outside [0, 1].
// `ranked(i)` gives the i-th smallest value (from 0), for values kept other than as a sorted list.
double quantile(std::size_t n, double q, const std::function<double(std::size_t)>& ranked);
// The same, of values already in ascending order.
double quantile_sorted(std::span<const double> sorted, double q);

// Throws std::invalid_argument for empty input or non-finite values.
Summary summarize(std::vector<double> values);

}  // namespace tb::scenario
