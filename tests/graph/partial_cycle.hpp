// The deadlock of partial_cycle: ranks 0-2 each in MPI_Recv from the next,
// in wait_for_neighbour, while the other ranks compute. Shared by the tests
// that run it on one host and over several hosts.
#pragma once

#include "scenario.hpp"

namespace harness {

inline ExpectedDeadlock partial_cycle_deadlock() {
  return {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=2\b)"}, {2, R"(MPI_Recv\(.*source=0\b)"}},
          .blocking_functions = {"wait_for_neighbour"}};
}

}  // namespace harness
