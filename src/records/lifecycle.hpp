// Whether the job is being ended on purpose: MPI_Abort, called by the
// program or by the checker after its report. The exit that follows is then
// not a rank leaving without MPI_Finalize, and is not reported.
#pragma once

#include <atomic>

namespace mpisentry::lifecycle {

namespace detail {
inline std::atomic<bool> aborting{false};
}  // namespace detail

// Just before PMPI_Abort.
inline void note_abort() noexcept { detail::aborting.store(true, std::memory_order_release); }
inline bool aborting() noexcept { return detail::aborting.load(std::memory_order_acquire); }

}  // namespace mpisentry::lifecycle
