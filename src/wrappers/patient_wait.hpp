// Blocking point-to-point calls done as a nonblocking start and tests, for
// jobs with more ranks on a node than cores. There MPICH's blocking calls
// busy-poll while holding its lock, and the monitor threads get neither CPU
// nor lock: rounds took 40 ms at 8 ranks on 2 cores (see the MPICH probe
// notes). A patient wait spins about 2 ms, as MPICH would, then sleeps with
// growing pauses, so a rank that really waits gives its core away. Blocking
// and nonblocking point-to-point operations match each other, so this is
// invisible to the other ranks; collectives are never converted.
#pragma once

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <chrono>

namespace mpisentry {

inline constexpr auto kPatientSpin = std::chrono::milliseconds(2);
inline constexpr long kFirstPauseNs = 10'000;
inline constexpr long kLongestPauseNs = 1'000'000;

// Calls test(&done) until done or an error. The clock is read only once the
// first test has not completed.
template <typename Test>
int until_done(Test&& test) {
  int done = 0;
  int result = test(&done);
  if (result != MPI_SUCCESS || done) return result;
  const auto spin_until = std::chrono::steady_clock::now() + kPatientSpin;
  long pause_ns = kFirstPauseNs;
  while (true) {
    result = test(&done);
    if (result != MPI_SUCCESS || done) return result;
    if (std::chrono::steady_clock::now() < spin_until) continue;
    const timespec pause{0, pause_ns};
    nanosleep(&pause, nullptr);
    pause_ns = std::min(pause_ns * 2, kLongestPauseNs);
  }
}

// start(args..., &request), then tests the request until it completes.
template <typename Start, typename... Args>
int start_then_wait(Start start, MPI_Status* status, Args... args) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int started = start(args..., &request);
  if (started != MPI_SUCCESS) return started;
  return until_done([&](int* done) { return PMPI_Test(&request, done, status); });
}

}  // namespace mpisentry
