#pragma once
// The twinbench subcommands, callable from main() and from the integration tests.
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace tb::verdicts {
struct Tolerance;
}

namespace tb::app {

// Exit codes: 0 success, 1 the run failed, 2 bad input (command line, a file, or something the
// command needs from the machine: tb::InputError), 130 or 143 stopped by SIGINT or SIGTERM.
int main_with_args(const std::vector<std::string>& args);

// One subcommand: registered on the parser, run when parsing chose it. A command reports failure
// by throwing; main_with_args turns that into the exit code, in one place.
struct Command {
  CLI::App* cli;
  std::function<void()> run;
  // Set by a command whose exit status is another program's (shell): returned after run().
  std::shared_ptr<int> exit_status = nullptr;
};

// One per file, each holding its own arguments.
Command add_run_command(CLI::App& app);
Command add_serve_command(CLI::App& app);
Command add_load_command(CLI::App& app);
Command add_reproduce_command(CLI::App& app);
Command add_validate_command(CLI::App& app);
Command add_compare_command(CLI::App& app);
Command add_calibrate_command(CLI::App& app);
Command add_sweep_command(CLI::App& app);
Command add_merge_command(CLI::App& app);
Command add_shell_command(CLI::App& app);
Command add_diff_command(CLI::App& app);
Command add_trace_command(CLI::App& app);

// --tolerance-frames and --tolerance-pct (run --baseline, diff): the criterion's two terms.
void add_tolerance_options(CLI::App* cmd, verdicts::Tolerance& tolerance);

// Runs a command's work with SIGINT and SIGTERM turned into a clean stop: the worker processes
// killed and reaped, temporary files removed, nothing written, exit 128 + the signal
// (parallel/stop_signals.hpp). The worker pool notices the signal by itself; a real-time run
// (live, emulated) notices it through RunOptions::stop_requested = stop_signal_received.
void stop_on_signals(const std::function<void()>& work);
bool stop_signal_received();

// Default of every --jobs option: all cores.
unsigned all_cores();

}  // namespace tb::app
