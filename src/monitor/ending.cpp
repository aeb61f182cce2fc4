#include "monitor/ending.hpp"

#include <mpi.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <thread>

#include "log/log.hpp"
#include "records/lifecycle.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr int kAbortExitCode = 1;
constexpr auto kStderrDrainLimit = 2s;
constexpr auto kStderrForwarding = 100ms;  // from the launcher's proxy on to mpiexec

// The launcher forwards stderr through a pipe and kills the job as soon as
// MPI_Abort reaches it: let it read the report first.
void wait_for_stderr_to_drain() {
  const auto deadline = Clock::now() + kStderrDrainLimit;
  int unread = 0;
  while (ioctl(STDERR_FILENO, FIONREAD, &unread) == 0 && unread > 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(kStderrForwarding);
}

}  // namespace

void ExitNotice::wait_for_report() const {
  const auto deadline = Clock::now() + kReportLimit;
  while (!checking_ended() && Clock::now() < deadline) std::this_thread::sleep_for(2ms);
}

void abort_job(report::Check check) {
  log::error("{}: aborting the job", report::check_name(check));
  wait_for_stderr_to_drain();
  lifecycle::note_abort();
  PMPI_Abort(MPI_COMM_WORLD, kAbortExitCode);
  std::abort();  // PMPI_Abort does not return
}

}  // namespace mpisentry::monitor
