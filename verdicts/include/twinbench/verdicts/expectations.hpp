#pragma once
// A scenario's `expect` section checked against a run's results: each expectation, on each cell
// it selects, with each of its bounds (docs/ci.md).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results.pb.h"
#include "twinbench/verdicts/junit.hpp"

namespace tb::verdicts {

struct ExpectationCheck {
  int index = 0;  // expect[index] of the scenario
  std::string scenario, variant;
  std::uint32_t fps = 0;
  std::uint64_t body_bytes = 0;
  std::string statistic;  // "median", "p95" (QUANTILE 0.95), "max"
  std::string unit;       // "ms" or "frames"
  double bound = 0;
  // The statistic of the cell's successful measured requests; nullopt when none succeeded.
  std::optional<double> value;
  std::size_t requests = 0, failures = 0;
  bool failures_allowed = false;
  std::string first_error;

  bool held() const;
  std::string cell() const;         // "nat_coop, 60 fps, 1 MB"
  std::string requirement() const;  // "median <= 20 frames"
  std::string outcome() const;      // "median 18 frames" or why it was breached
};

// Every (expectation, selected cell, bound) of the results' scenario, in expectation order, then
// the cells' report order, then ms before frames. Empty when the scenario has no expectations.
std::vector<ExpectationCheck> check_expectations(const twinbench::ResultSet& results);

std::size_t breached(const std::vector<ExpectationCheck>& checks);
// "all 3 expectations held (12 checks over their cells)" or
// "2 of 12 expectation checks breached (expect[0], expect[2])".
std::string expectations_summary(const std::vector<ExpectationCheck>& checks);
// The "## Expectations" section of results.md: the summary, then one row per check.
std::string expectations_markdown(const std::vector<ExpectationCheck>& checks);
// One JUnit test case per check, failed when breached.
JUnitSuite expectations_junit(const std::vector<ExpectationCheck>& checks,
                              const std::string& scenario_name);

}  // namespace tb::verdicts
