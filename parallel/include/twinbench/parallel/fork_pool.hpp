#pragma once
// Runs independent tasks in child processes, a bounded number at once. ns-3's simulator is a
// process-wide singleton, so simulations run in parallel only as separate processes.
#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

namespace tb::parallel {

// Runs task(i) for every i in [0, count) in a forked child, at most `jobs` at once, in index
// order; a child exits with task(i)'s return value (an exception is reported on stderr and counts
// as failure). `group(i)`, if given, names tasks that start together with task i, beyond `jobs`
// if need be: tasks of which one waits for the others' output as they go, and keeps pace only
// while they all run. After each child ends, the parent calls on_done(i, ok). The first failure
// stops new launches; the running children are still waited for (on_done is where the caller
// unblocks those waiting on the failed one). Returns the first failed index, or nullopt.
// `while_waiting`, if given, is called again and again while children run and none has ended; it
// should block for a moment (it sets the pace of the polling). If anything throws, the children
// still running are killed and reaped before the exception leaves. A stop request (SIGINT or
// SIGTERM under a StopOnSignals, stop_signals.hpp) throws Interrupted, checked before each launch
// and every few milliseconds while waiting. Each child gets the signals' default actions back and
// is killed (PR_SET_PDEATHSIG) if this process dies.
std::optional<std::size_t> run_forked(
    std::size_t count, unsigned jobs, const std::function<int(std::size_t)>& task,
    const std::function<void(std::size_t, bool)>& on_done = {},
    const std::function<std::vector<std::size_t>(std::size_t)>& group = {},
    const std::function<void()>& while_waiting = {});

}  // namespace tb::parallel
