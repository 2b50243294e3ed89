#include "commands.hpp"

#include <algorithm>
#include <iostream>
#include <thread>

#include <CLI/CLI.hpp>

#include "twinbench/parallel/stop_signals.hpp"
#include "twinbench/runner/run_scenario.hpp"
#include "twinbench/scenario/input_error.hpp"
#include "twinbench/verdicts/criterion.hpp"

namespace tb::app {

void stop_on_signals(const std::function<void()>& work) {
  const parallel::StopOnSignals stop;
  try {
    work();
  } catch (const runner::RunStopped&) {
    parallel::throw_if_stopped();  // a real-time run abandoned at the signal
    throw;
  }
  parallel::throw_if_stopped();  // a signal after the work: the output is complete, still report it
}

bool stop_signal_received() { return parallel::stop_signal() != 0; }

void add_tolerance_options(CLI::App* cmd, verdicts::Tolerance& tolerance) {
  cmd->add_option("--tolerance-frames", tolerance.frames,
                  "A cell regressed when it moved by more than this many frames (capped cells) "
                  "or frame periods (uncapped) and by more than --tolerance-pct")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--tolerance-pct", tolerance.percent, "... and by more than this % of the baseline")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
}

unsigned all_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

int main_with_args(const std::vector<std::string>& args) {
  CLI::App app{"twinbench: HTTP clients in a frame loop, over real sockets or a simulated link"};
  app.require_subcommand(1);
  // What a bug report needs: this program's version and the simulator it links.
  app.set_version_flag("--version", "twinbench " TWINBENCH_VERSION " (ns-3 " TWINBENCH_NS3_VERSION
                                    ", " TWINBENCH_BUILD_TYPE ")");
  const std::vector<Command> commands = {
      add_run_command(app),       add_serve_command(app),    add_load_command(app),
      add_reproduce_command(app), add_validate_command(app), add_compare_command(app),
      add_calibrate_command(app), add_sweep_command(app),    add_merge_command(app),
      add_shell_command(app),     add_diff_command(app),     add_trace_command(app)};
  std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    for (const Command& c : commands) {
      if (!*c.cli) continue;
      c.run();
      if (c.exit_status) return *c.exit_status;
    }
    return 0;
  } catch (const parallel::Interrupted& e) {
    std::cerr << "error: " << e.what() << ": workers stopped, no partial file left\n";
    return 128 + e.signal();
  } catch (const InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace tb::app
