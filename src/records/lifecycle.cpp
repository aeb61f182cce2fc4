#include "records/lifecycle.hpp"

#include <mpi.h>
#include <pthread.h>

#include <cstdlib>

#include "log/log.hpp"

namespace mpisentry::lifecycle {

void abort_job(int exit_code) {
  log::wait_for_stderr_to_drain();
  note_abort();
  PMPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // PMPI_Abort does not return
}

void watch_forks() {
  pthread_atfork(nullptr, nullptr, [] { detail::forked_child.store(true, std::memory_order_release); });
}

}  // namespace mpisentry::lifecycle
