#pragma once
// Shared by the emulated-path tests: skip, naming the failing step, where the path cannot be
// built (no CAP_NET_ADMIN, namespaces, TUN or congestion control). CI runs as root and sets
// TWINBENCH_REQUIRE_EMULATED_PATH=1 (.ci/run), which turns the skip into a failure.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "twinbench/emulated/emulated_path.hpp"

#define TB_REQUIRE_EMULATED_PATH()                                                           \
  do {                                                                                       \
    if (const auto missing = ::tb::emulated::check_needs({"cubic", "bbr"})) {                \
      const char* required = std::getenv("TWINBENCH_REQUIRE_EMULATED_PATH");                 \
      if (required && std::string(required) == "1")                                          \
        FAIL() << "emulated path required but unavailable at step " << missing->step << ": " \
               << missing->message;                                                          \
      GTEST_SKIP() << "emulated path unavailable at step " << missing->step << ": "          \
                   << missing->message;                                                      \
    }                                                                                        \
  } while (0)
