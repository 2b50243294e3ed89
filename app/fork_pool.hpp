#pragma once
// Runs independent tasks in child processes, a bounded number at once. ns-3's simulator is a
// process-wide singleton, so simulations run in parallel only as separate processes.
#include <cstddef>
#include <functional>
#include <optional>

namespace tb::app {

// Runs task(i) for every i in [0, count) in a forked child, at most `jobs` at once; a child exits
// with task(i)'s return value (an exception is reported on stderr and counts as failure). Tasks
// start in index order, skipping those not yet ready(i) (default: all ready) until they are.
// After each child ends, the parent calls on_done(i, ok) (where it may make others ready). The
// first failure stops new launches; the running children are still waited for. Returns the first
// failed index, or nullopt. Tasks that are still not ready when nothing runs are left unrun.
// `while_waiting`, if given, is called again and again while children run and none has ended; it
// should block for a moment (it sets the pace of the polling).
std::optional<std::size_t> run_forked(std::size_t count, unsigned jobs, const std::function<int(std::size_t)>& task,
                                      const std::function<void(std::size_t, bool)>& on_done = {},
                                      const std::function<bool(std::size_t)>& ready = {},
                                      const std::function<void()>& while_waiting = {});

}  // namespace tb::app
