// MPI_Wait, Waitall, Waitany and Waitsome run as the waiting thread's own
// loop of the matching test (MPI_Test, Testall, Testany, Testsome), so that
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
#include "records/message_tallies.hpp"
#include "records/partitioned_requests.hpp"
#include "records/persistent_collectives.hpp"
#include "records/thread_state.hpp"

namespace mpisentry {

// Which of the first kCopiedRequests of `array` are incomplete, as a mask:
// asked of MPI_Request_get_status (`get_status`, a fake in the unit tests),
// which neither frees nor deactivates a request, for requests whose state is
// readable (state_readable); the others count as complete, so no wait rests
// on them (the monitor leaves them unknown anyway). A receive found complete
// has matched its message: counted as matched now (RequestTable::
// matched_early), for the wait may never return while others deadlock.
template <typename GetStatus>
std::uint32_t incomplete_requests(int count, const MPI_Request* array, GetStatus&& get_status) {
  std::uint32_t incomplete = 0;
  for (int i = 0; i < count && i < kCopiedRequests; ++i) {
    CallRecord started;
    int done = 1;
    MPI_Status status;
    if (array[i] == MPI_REQUEST_NULL || !requests().find(array[i], started) || !state_readable(started) ||
        get_status(array[i], &done, &status) != MPI_SUCCESS)
      continue;
    if (!done) {
      incomplete |= std::uint32_t{1} << i;
    } else if (const RequestTable::Completed early = requests().matched_early(array[i]);
               early.receives && early.tallies != nullptr && status.MPI_SOURCE >= 0) {
      early.tallies->matched(status.MPI_SOURCE, status.MPI_TAG);
    }
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
  PatientPauses pauses;
  return test_until(test, [&] {
    if (const std::uint64_t ask = self.unanswered_ask()) answer(ask);
    if (patient) pauses.after_test();
  });
}

// Whether MPI_Waitall's array holds a partitioned request or a persistent
// collective's: MPICH 4.0's MPI_Testall fails on those (its error handler
// aborts the job) where MPI_Waitall does not, so the wait is then tested by
// tested_by_status.
inline bool testall_fails_on(int count, const MPI_Request* array) noexcept {
  const bool partitioned = partitioned_requests::any(), collective = persistent_collectives::any();
  if ((!partitioned && !collective) || array == nullptr) return false;
  for (int i = 0; i < count; ++i) {
    if (partitioned && partitioned_requests::is_partitioned(array[i])) return true;
    if (CallRecord started; collective && requests().find(array[i], started) && is_persistent_collective(started))
      return true;
  }
  return false;
}

// MPI_Testall's step as each request's MPI_Request_get_status (which
// completes nothing), and once every one is done, MPI_Waitall itself, which
// then returns at once with what MPI_Testall would have.
inline int tested_by_status(int count, MPI_Request* array, int* done, MPI_Status* statuses) {
  *done = 0;
  for (int i = 0; i < count; ++i) {
    int flag = 1;
    if (array[i] == MPI_REQUEST_NULL) continue;
    if (const int result = PMPI_Request_get_status(array[i], &flag, MPI_STATUS_IGNORE); result != MPI_SUCCESS)
      return result;
    if (!flag) return MPI_SUCCESS;
  }
  *done = 1;
  return PMPI_Waitall(count, array, statuses);
}

// The wait on `count` requests of `array`, by its test form `test`.
template <typename Test>
int tested_wait(ThreadState& self, int count, const MPI_Request* array, bool patient, Test&& test) {
  return test_until_done(self, patient, test, [&](std::uint64_t ask) { answer_ask(self, ask, count, array); });
}

}  // namespace mpisentry
