// MPI_Wait, Waitall, Waitany and Waitsome on requests whose states can be
// read (CallRecord::tests_requests) run as a loop of the waiting thread, so
// that it can answer the monitor's asks with which of them are incomplete:
// a deadlock may rest only on requests still incomplete when the monitor
// looks, and the monitor's thread calls no MPI. MPI_Request_get_status
// tests them, as it neither frees nor deactivates a request; once the call
// can return, the call itself completes them, with its own statuses, errors
// and error handler. The loop spins as MPI's own wait does, or pauses as a
// patient wait (patient_wait.hpp).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>

#include "records/call_record.hpp"
#include "records/thread_state.hpp"

namespace mpisentry {

// When the call can return: Wait and Waitall once every request has
// completed, Waitany and Waitsome once one has (or none is active).
enum class Completion : bool { All, Any };

// Whether a Wait on these requests may run as a tested loop: every one is
// null or was started by a call whose state is readable (state_readable).
inline bool requests_readable(int count, const MPI_Request* array) {
  return array != nullptr && count > 0 && requests().all_readable(count, array);
}

// Tests `count` requests until `completion` holds, answering the monitor's
// asks meanwhile (ThreadState::ask); returns at once when a test fails, for
// the call itself to raise the error. `get_status(request, &flag)` tests
// one request (MPI_Request_get_status, or a fake in the unit tests),
// `pause()` runs after each round of tests that found the call unable to
// return, `before_answer()` before each answer.
template <typename GetStatus, typename Pause, typename BeforeAnswer>
void test_until_complete_with(ThreadState& self, Completion completion, int count, const MPI_Request* array,
                              GetStatus&& get_status, Pause&& pause, BeforeAnswer&& before_answer) {
  int first = 0;  // Completion::All: the requests before it were seen complete
  const auto answer = [&](std::uint64_t ask) {
    before_answer();
    std::uint32_t incomplete = 0;
    for (int i = first; i < std::min(count, kCopiedRequests); ++i) {
      int done = 1;
      // A failed test counts as complete: no wait rests on it.
      if (array[i] != MPI_REQUEST_NULL && get_status(array[i], &done) == MPI_SUCCESS && !done)
        incomplete |= std::uint32_t{1} << i;
    }
    self.answer(ask, incomplete);
  };
  if (completion == Completion::Any) {
    // MPI_Request_get_status finds an inactive persistent request complete,
    // where MPI_Waitany and MPI_Waitsome skip it: a request complete at the
    // first look leaves the call to MPI at once. One incomplete at the first
    // look and complete at a later one has completed.
    bool active = false;
    for (int i = 0; i < count; ++i) {
      if (array[i] == MPI_REQUEST_NULL) continue;
      int done = 0;
      if (get_status(array[i], &done) != MPI_SUCCESS || done) return;
      active = true;
    }
    if (!active) return;
  }
  while (true) {
    if (const std::uint64_t ask = self.unanswered_ask()) answer(ask);
    if (completion == Completion::All) {
      for (; first < count; ++first) {
        if (array[first] == MPI_REQUEST_NULL) continue;
        int done = 0;
        if (get_status(array[first], &done) != MPI_SUCCESS) return;
        if (!done) break;
      }
      if (first == count) return;
    } else {
      for (int i = 0; i < count; ++i) {
        if (array[i] == MPI_REQUEST_NULL) continue;
        int done = 0;
        if (get_status(array[i], &done) != MPI_SUCCESS || done) return;
      }
    }
    pause();
  }
}

// The same with MPI_Request_get_status, spinning or with patient pauses,
// comparing the collective checks' pending exchanges before each answer.
void test_until_complete(ThreadState& self, Completion completion, int count, const MPI_Request* array,
                         bool patient);

// The wait: tests, then `complete()`, the MPI call itself.
template <typename Complete>
int tested_wait(ThreadState& self, Completion completion, int count, const MPI_Request* array, bool patient,
                Complete complete) {
  test_until_complete(self, completion, count, array, patient);
  return complete();
}

}  // namespace mpisentry
