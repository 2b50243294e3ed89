// SIGINT and SIGTERM during a run on the emulated path and during compare (the real binary,
// mid-run): the path's side processes are ended and reaped, nothing is written and the exit status
// is 128 + the signal, whether the signal reaches twinbench alone or its whole process group (Ctrl-C),
// which includes the sides.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>

#include <string>
#include <tuple>
#include <vector>

#include "path_fixture.hpp"
#include "support/clean_stop.hpp"

namespace tb {
namespace {

const std::string kSource = TWINBENCH_SOURCE_DIR;

// Each stopped once its first samples are on the emulated path.
const std::vector<testing::StoppableCommand> kCases = {
    {"run_emulated",
     {"run", "--backend", "emulated", "--runs", "200", "--out", "{out}"},
     " samples, "},
    {"compare",
     {"compare", kSource + "/scenarios/compare/bbr_fresh_40ms.textproto", "--runs", "20", "--jobs",
      "2", "--out", "{out}"},
     "points on the emulated path"},
};

class EmulatedSignal
    : public ::testing::TestWithParam<std::tuple<testing::StoppableCommand, int, bool>> {
 protected:
  // Orphaned sides would be re-parented to this process, where the test sees them.
  void SetUp() override { ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
  void TearDown() override { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
};

TEST_P(EmulatedSignal, EndsTheSidesWritesNothingAndExits128PlusTheSignal) {
  TB_REQUIRE_EMULATED_PATH();
  const auto& [c, signal, whole_group] = GetParam();
  testing::expect_clean_stop(c, signal, whole_group);
}

INSTANTIATE_TEST_SUITE_P(
    Commands, EmulatedSignal,
    ::testing::Values(std::make_tuple(kCases[0], SIGINT, false),
                      std::make_tuple(kCases[0], SIGTERM, false),
                      std::make_tuple(kCases[0], SIGINT, true),
                      std::make_tuple(kCases[1], SIGTERM, false),
                      std::make_tuple(kCases[1], SIGINT, true)),
    [](const auto& info) {
      return std::get<0>(info.param).name + "_SIG" + ::sigabbrev_np(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_group" : "");
    });

}  // namespace
}  // namespace tb
