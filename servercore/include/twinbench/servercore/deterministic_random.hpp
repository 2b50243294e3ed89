#pragma once
// Makes OpenSSL's randomness a seeded stream for as long as an instance lives, so key generation
// and TLS handshakes (client and server randoms, key shares, ECDSA nonces, session tickets) give
// the same bytes run to run. It replaces the process-wide RAND method: create one only where
// nothing else in the process needs real randomness meanwhile (a simulation, test certificates).
// Instances nest (the innermost one's stream is used, the outer one resumes where it stopped);
// destroy them in reverse order of creation. Not for live use.
#include <cstdint>
#include <memory>

namespace tb::servercore {

class DeterministicRandom {
 public:
  explicit DeterministicRandom(std::uint64_t seed);
  ~DeterministicRandom();  // restores OpenSSL's default randomness
  DeterministicRandom(const DeterministicRandom&) = delete;
  DeterministicRandom& operator=(const DeterministicRandom&) = delete;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace tb::servercore
