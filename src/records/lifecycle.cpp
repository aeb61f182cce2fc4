#include "records/lifecycle.hpp"

#include <mpi.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

namespace mpisentry::lifecycle {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr auto kStderrDrainLimit = 2s;
constexpr auto kStderrForwarding = 100ms;  // from the launcher's proxy on to mpiexec

void wait_for_stderr_to_drain() {
  const auto deadline = Clock::now() + kStderrDrainLimit;
  int unread = 0;
  while (ioctl(STDERR_FILENO, FIONREAD, &unread) == 0 && unread > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(kStderrForwarding);
}

}  // namespace

void abort_job(int exit_code) {
  wait_for_stderr_to_drain();
  note_abort();
  PMPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // PMPI_Abort does not return
}

void watch_forks() {
  pthread_atfork(nullptr, nullptr, [] { detail::forked_child.store(true, std::memory_order_release); });
}

}  // namespace mpisentry::lifecycle
