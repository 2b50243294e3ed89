#pragma once
// The twinbench subcommands, callable from main() and from the integration tests.
#include <string>
#include <vector>

namespace tb::app {

// Exit codes: 0 success, 1 the run failed, 2 bad input (command line or scenario file).
int main_with_args(const std::vector<std::string>& args);

}  // namespace tb::app
