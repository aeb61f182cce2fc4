// Where the process stands in the job's life, for the paths that end it:
//  - whether the job is being ended on purpose: MPI_Abort, called by the
//    program or by the checker after its report. The exit that follows is
//    then not a rank leaving without MPI_Finalize, and is not reported;
//  - whether this process is a child the rank forked (fork, system, popen):
//    it has none of the checker's threads and is no rank, so its exit and
//    its signals are its own business.
#pragma once

#include <atomic>

namespace mpisentry::lifecycle {

namespace detail {
inline std::atomic<bool> aborting{false};
inline std::atomic<bool> forked_child{false};
inline std::atomic<void (*)()> abort_hook{nullptr};
}  // namespace detail

// Run once, by the first note_abort (the monitor's: its neighbours learn
// that this rank ends, and do not take it for lost). Must not throw.
inline void set_abort_hook(void (*hook)()) noexcept { detail::abort_hook.store(hook, std::memory_order_release); }

// Just before PMPI_Abort.
inline void note_abort() noexcept {
  if (detail::aborting.exchange(true, std::memory_order_acq_rel)) return;
  if (void (*hook)() = detail::abort_hook.load(std::memory_order_acquire)) hook();
}
inline bool aborting() noexcept { return detail::aborting.load(std::memory_order_acquire); }

// The checker ends the job after a fatal report: once the report has reached
// the launcher (the launcher forwards stderr through a pipe and kills the
// job as soon as MPI_Abort reaches it), MPI_Abort with `exit_code`.
[[noreturn]] void abort_job(int exit_code);

// Once, in MPI_Init: from then on a fork's child knows it is one.
void watch_forks();
inline bool in_forked_child() noexcept { return detail::forked_child.load(std::memory_order_acquire); }

}  // namespace mpisentry::lifecycle
