#include "interceptors/tested_wait.hpp"

#include "checks/collectives.hpp"
#include "interceptors/patient_wait.hpp"

namespace mpisentry {

void test_until_complete(ThreadState& self, Completion completion, int count, const MPI_Request* array,
                         bool patient) {
  const auto get_status = [](MPI_Request request, int* done) {
    return PMPI_Request_get_status(request, done, MPI_STATUS_IGNORE);
  };
  // A hang reaches no later collective: the exchanges that have arrived
  // are compared before the monitor, which asked, reports the hang.
  const auto compare_collectives = [] { checks::compare_arrived_collectives(); };
  if (patient) {
    PatientPauses pauses;
    test_until_complete_with(self, completion, count, array, get_status, [&pauses] { pauses.after_test(); },
                             compare_collectives);
  } else {
    test_until_complete_with(self, completion, count, array, get_status, [] {}, compare_collectives);
  }
}

}  // namespace mpisentry
