#pragma once
// The command-line options of the studies' commands; the commands themselves are in studies/.
#include "twinbench/studies/sweep.hpp"
#include "twinbench/studies/twin_compare.hpp"

namespace CLI {
class App;
}

namespace tb::app {

// Register the subcommands on `app`; the commands run with the arguments filled in by parsing.
CLI::App* add_sweep_subcommand(CLI::App& app, studies::SweepArgs& args);
CLI::App* add_merge_subcommand(CLI::App& app, studies::MergeArgs& args);
CLI::App* add_twin_compare_subcommand(CLI::App& app, studies::TwinCompareArgs& args);

}  // namespace tb::app
