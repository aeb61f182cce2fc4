// MPI_Wait, Waitall, Waitany and Waitsome run as the waiting thread's own
// loop of the matching test (MPI_Test, Testall, Testany, Testsome; Waitall
// walks its requests after one Testall, below), so that
// it can answer the monitor's asks with which of its requests are
// incomplete: a deadlock may rest only on requests still incomplete when the
// monitor looks, and the monitor's thread calls no MPI. A test that finds
// the call done has done what the wait would have (MPI 4.0, 3.7.3 and
// 3.7.5): the same statuses, error codes and error handler. The loop spins
// as MPI's own wait does, or pauses as a patient wait (patient_wait.hpp).
#pragma once

#include <mpi.h>

#include <cstdint>

#include "interceptors/patient_wait.hpp"
#include "records/call_record.hpp"
#include "records/thread_state.hpp"

namespace mpisentry {

// Whether MPI_Request_get_status may be asked about `request`: one this
// thread's process saw start as a readable operation (state_readable). Never
// a generalized request, whose query and poll functions are the program's.
inline bool readable(MPI_Request request) {
  CallRecord started;
  return requests().find(request, started) && state_readable(started);
}

// Which of the first kCopiedRequests of `array` are incomplete, as a mask:
// asked of MPI_Request_get_status (`get_status`, a fake in the unit tests),
// which neither frees nor deactivates a request, for requests whose state is
// readable (state_readable); the others count as complete, so no wait rests
// on them (the monitor leaves them unknown anyway).
template <typename GetStatus>
std::uint32_t incomplete_requests(int count, const MPI_Request* array, GetStatus&& get_status) {
  std::uint32_t incomplete = 0;
  for (int i = 0; i < count && i < kCopiedRequests; ++i) {
    int done = 1;
    if (array[i] != MPI_REQUEST_NULL && readable(array[i]) && get_status(array[i], &done) == MPI_SUCCESS && !done)
      incomplete |= std::uint32_t{1} << i;
  }
  return incomplete;
}

// Answers the monitor's ask, after comparing the collective checks' arrived
// exchanges: a hang reaches no later collective.
void answer_ask(ThreadState& self, std::uint64_t ask, int count, const MPI_Request* array);

// `test(&done)` until done or an error, `answer(ask)` between tests when the
// monitor has asked. The first test comes at once: a wait whose requests are
// done costs one test.
template <typename Test, typename Answer>
int test_until_done(ThreadState& self, bool patient, Test&& test, Answer&& answer) {
  int done = 0;
  int result = test(&done);
  PatientPauses pauses;
  while (result == MPI_SUCCESS && !done) {
    if (const std::uint64_t ask = self.unanswered_ask()) answer(ask);
    if (patient) pauses.after_test();
    result = test(&done);
  }
  return result;
}

// The wait on `count` requests of `array`, by its test form `test`.
template <typename Test>
int tested_wait(ThreadState& self, int count, const MPI_Request* array, bool patient, Test&& test) {
  return test_until_done(self, patient, test, [&](std::uint64_t ask) { answer_ask(self, ask, count, array); });
}

// MPI_Waitall: one `test_all` (MPI_Testall); if not done, the requests one
// at a time with `get_status` (MPI_Request_get_status), each until it has
// completed, as MPI's own Waitall walks them (a Testall a round would scan
// every request each time), then `complete()`, the call itself, which
// returns at once with its own statuses, errors and handler; also when a
// test fails, for the call to raise the error. A request that is not
// `is_readable` leaves the rest to Testall rounds.
template <typename TestAll, typename IsReadable, typename GetStatus, typename Answer, typename Complete>
int walk_then_complete(ThreadState& self, int count, const MPI_Request* array, bool patient, TestAll&& test_all,
                       IsReadable&& is_readable, GetStatus&& get_status, Answer&& answer, Complete&& complete) {
  int done = 0;
  const int result = test_all(&done);
  if (result != MPI_SUCCESS || done) return result;
  PatientPauses pauses;
  for (int next = 0; next < count; ++next) {
    if (array[next] == MPI_REQUEST_NULL) continue;
    if (!is_readable(array[next])) return test_until_done(self, patient, test_all, answer);
    int completed = 0;
    while (true) {
      if (get_status(array[next], &completed) != MPI_SUCCESS) return complete();
      if (completed) break;
      if (const std::uint64_t ask = self.unanswered_ask()) answer(ask);
      if (patient) pauses.after_test();
    }
  }
  return complete();
}

template <typename TestAll, typename Complete>
int tested_waitall(ThreadState& self, int count, const MPI_Request* array, bool patient, TestAll&& test_all,
                   Complete&& complete) {
  return walk_then_complete(
      self, count, array, patient, test_all, readable,
      [](MPI_Request request, int* done) { return PMPI_Request_get_status(request, done, MPI_STATUS_IGNORE); },
      [&](std::uint64_t ask) { answer_ask(self, ask, count, array); }, complete);
}

}  // namespace mpisentry
