#pragma once
// Shared by the emulated-path tests: skip, naming the failing step, where the path cannot be
// built (no CAP_NET_ADMIN, namespaces, TUN or congestion control); CI runs as root, so there
// these tests run.
#include <gtest/gtest.h>

#include "twinbench/emulated/emulated_path.hpp"

#define TB_REQUIRE_EMULATED_PATH()                                                         \
  do {                                                                                     \
    if (const auto missing = ::tb::emulated::check_needs({"cubic", "bbr"}))                \
      GTEST_SKIP() << "emulated path unavailable at step " << missing->step << ": " << missing->message; \
  } while (0)
