#pragma once
// Seeds derived from a run's seed: the same on every machine and standard library (no <random>
// distributions, whose output the standard leaves to the implementation).
#include <cstdint>

namespace tb::scenario {

// SplitMix64's output function: consecutive inputs give independent-looking 64-bit values.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace tb::scenario
