#pragma once
// A twinbench command stopped mid-run by SIGINT or SIGTERM, and what it must leave: exit status
// 128 + the signal, "interrupted by SIG..." on stderr, no orphaned or surviving child process, no
// temporary file and no output file (a sweep keeps the points it had finished).
#include <ostream>
#include <string>
#include <vector>

namespace tb::testing {

struct StoppableCommand {
  std::string name;               // run, sweep, ... (a sweep may keep its finished points)
  std::vector<std::string> args;  // "{out}" stands for the output path
  // Text on stderr that shows the command mid-run; empty: mid-run once its workers exist.
  std::string under_way;
};

// GoogleTest names a parameter by this.
inline void PrintTo(const StoppableCommand& c, std::ostream* os) { *os << c.name; }

// Runs `c`, signals it mid-run (Ctrl-C in a terminal signals the whole process group, children
// included) and checks what it leaves with GoogleTest assertions. The calling process must be a
// child subreaper (prctl PR_SET_CHILD_SUBREAPER), so that it sees orphaned workers.
void expect_clean_stop(const StoppableCommand& c, int signal, bool whole_group);

}  // namespace tb::testing
