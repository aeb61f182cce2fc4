#include "interceptors/tested_wait.hpp"

#include "checks/collectives/collectives.hpp"
#include "races/races.hpp"

namespace mpisentry {

void answer_ask(ThreadState& self, std::uint64_t ask, int count, const MPI_Request* array) {
  checks::compare_arrived_collectives();
  races::note_completed_while_waiting();
  self.answer(ask, incomplete_requests(count, array, [](MPI_Request request, int* done, MPI_Status* status) {
                return PMPI_Request_get_status(request, done, status);
              }));
}

}  // namespace mpisentry
