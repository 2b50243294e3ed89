#pragma once
// The project's one criterion for two timings of a cell being the same result: within
// max(1 frame, 5 %) of the reference. reproduce/validate, compare and diff all judge with it.
#include <cstdint>

#include "scenario.pb.h"

namespace tb::verdicts {

struct Tolerance {
  double frames = 1;   // in frames of the cell's frame period
  double percent = 5;  // of the reference
};

// One frame of a cell: 1000 / fps ms, or (uncapped) the scenario's frame work.
double frame_ms(const twinbench::Scenario& scenario, std::uint32_t fps);

// How far a value may lie from the reference: max(frames x frame, percent % of the reference),
// in the unit of the reference (frame = frame_ms for times, 1 for frame counts).
double allowed(double reference, double frame, const Tolerance& tolerance = {});

// |difference| within allowed(reference, frame, tolerance), with a nanosecond's slack for the
// rounding of sums.
bool within(double difference, double reference, double frame, const Tolerance& tolerance = {});

}  // namespace tb::verdicts
