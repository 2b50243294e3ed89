#pragma once
// Shared by the emulated-path tests: where the path cannot be built (no CAP_NET_ADMIN,
// namespaces, TUN or congestion control) the test cannot judge: a skip naming the failing step,
// and under CI (which runs as root with /dev/net/tun) a failure (support/real_time.hpp).
#include <gtest/gtest.h>

#include <string>

#include "support/real_time.hpp"
#include "twinbench/emulated/emulated_path.hpp"

#define TB_REQUIRE_EMULATED_PATH()                                                     \
  do {                                                                                 \
    if (const auto missing = ::tb::emulated::check_needs({"cubic", "bbr"}))            \
      TB_CANNOT_JUDGE("emulated path unavailable at step " + missing->step + ": " +    \
                      missing->message);                                               \
  } while (0)
