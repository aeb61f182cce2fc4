#include "interceptors/tested_wait.hpp"

#include "checks/collectives.hpp"

namespace mpisentry {

void answer_ask(ThreadState& self, std::uint64_t ask, int count, const MPI_Request* array) {
  checks::compare_arrived_collectives();
  self.answer(ask, incomplete_requests(count, array, [](MPI_Request request, int* done) {
                return PMPI_Request_get_status(request, done, MPI_STATUS_IGNORE);
              }));
}

}  // namespace mpisentry
