#pragma once
// `twinbench calibrate`: fits a few global parameters of a network profile on a declared subset of
// the published cells (a deterministic coordinate descent over bounded grids) and reports the
// error of the held-out cells. See docs/model.md.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "twinbench/studies/reproduce.hpp"
#include "scenario.pb.h"

namespace tb::studies {

// One fitted parameter: a name (as documented in docs/model.md), its grid, and how it is read
// from and written into a profile.
struct CalibrationParameter {
  std::string name;
  std::string source;        // what the parameter stands for, for the report
  std::vector<double> grid;  // candidate values, in increasing order
  std::function<double(const twinbench::Scenario&)> get;
  std::function<void(twinbench::Scenario&, double)> set;
  // Fitted only when named in --params: a random parameter needs many runs per cell.
  bool only_when_named = false;
};

// The parameters `calibrate` knows, in the order it visits them.
std::vector<CalibrationParameter> calibration_parameters();
// Selects parameters by comma-separated names (empty: all but the only_when_named ones); throws
// naming an unknown one.
std::vector<CalibrationParameter> select_parameters(const std::string& names);

// Cell selection: comma-separated patterns `scenario[/fps[/bytes[/variant]]]`, `*` matching any
// value; an omitted part matches any value. "rest" (holdout only) = every published cell not
// fitted.
bool cell_matches(const MeasuredCell& c, const std::string& patterns);
void check_cell_patterns(const std::string& patterns, const std::string& option);

struct CalibrateOptions {
  std::string profile = "lightsail-2026";
  std::string fit = "latency,small_download";
  std::string holdout = "rest";
  std::string params;  // empty: the defaults
  std::string starts;  // NAME=V1,V2,...: one descent per starting value of a fitted parameter
  std::string out = "out/calibration/lightsail-2026.fitted.textproto";
  unsigned jobs = 1;
  std::uint32_t runs = 5;  // measured rounds per cell during the search (warmups as published)
  unsigned passes = 3;
  bool quiet = false;
};

// Score of a comparison: cells outside the goal first, then the mean |% error| (each capped at
// 100).
double calibration_loss(const Comparison& c);

// Throws InputError for bad options or files, anything else when a simulation fails.
void calibrate(const CalibrateOptions& args);

}  // namespace tb::studies
