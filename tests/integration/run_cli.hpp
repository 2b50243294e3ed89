#pragma once
// `twinbench ARGS...` run in-process, as the integration tests drive the command line.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "commands.hpp"

namespace tb::testing {

// Runs `twinbench args...` (app::main_with_args) with its stdout and stderr captured; gives
// them to `out` and `err` when asked, and returns the exit code.
inline int run_cli(std::vector<std::string> args, std::string* err = nullptr,
                   std::string* out = nullptr) {
  args.insert(args.begin(), "twinbench");
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  const int code = app::main_with_args(args);
  const std::string captured_out = ::testing::internal::GetCapturedStdout();
  const std::string captured_err = ::testing::internal::GetCapturedStderr();
  if (out) *out = captured_out;
  if (err) *err = captured_err;
  return code;
}

}  // namespace tb::testing
