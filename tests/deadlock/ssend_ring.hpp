// The deadlock of ssend_ring (and its C++ twin and the README's example):
// each rank blocked in MPI_Ssend to the next rank, at a line of `function`.
// Shared by the tests that run it on one host, over several hosts and under
// Slurm.
#pragma once

#include <string>

#include "scenario.hpp"

namespace harness {

inline ExpectedDeadlock ssend_ring_deadlock(int ranks, const std::string& function) {
  ExpectedDeadlock expected;
  expected.blocking_functions = {function};
  for (int rank = 0; rank < ranks; ++rank)
    expected.calls[rank] = R"(MPI_Ssend\(.*dest=)" + std::to_string((rank + 1) % ranks) + R"(\b)";
  return expected;
}

}  // namespace harness
