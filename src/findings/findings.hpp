// Where the consistency checks' findings go: each rank counts its findings
// per check, prints them (report file first, then stderr) unless they repeat
// past CHECK-SUPPRESSION-LIMIT or pass CHECK-MAX-REPORTS or a SUPPRESSIONS
// line leaves them out, and aborts the job once its errors reach
// CHECK-MAX-ERRORS. Warnings never end the program.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "report/report.hpp"
#include "records/call_record.hpp"

namespace mpisentry::checks {

// How long MPI_Finalize and MPI_Comm_free wait for the checks' own messages
// and exchanges that every member sent: reached only when a rank stopped
// making progress, and then the checks give up rather than hang.
inline constexpr std::chrono::seconds kDrainLimit{10};

// From checks::start (MPI_Init), once the settings are known and the report
// sink is open, before the trackers and analyses start. Makes the
// communicator finish_findings() sums the counts over.
void start_findings(const config::Settings& settings, int world_rank);

// Whether some consistency check (from GLOBAL:COLLECTIVE on in the checks
// table) is on: the trackers and analyses start only then.
bool any_on() noexcept;

// What each tracker and analysis gets when it starts (checks/lifecycle.def),
// after start_findings: it reads its checks with on().
struct StartContext {
  const config::Settings& settings;
  bool multiple_threads;  // the program runs at MPI_THREAD_MULTIPLE
  int thread_level;       // the level MPI_Init_thread gave the program (MPI_Init: MPI_THREAD_SINGLE)
};

// Whether `check` is switched on (false before start_findings()).
bool on(report::Check check) noexcept;

// This process's rank in MPI_COMM_WORLD (0 before start()).
int world_rank() noexcept;

// The MPI_COMM_WORLD rank of `rank` among `peers` (comms::Info::peers());
// `rank` itself when the checker does not know the communicator.
int world_rank_of(const std::vector<int>& peers, int rank);

// A call as reports show it, with its arguments.
std::string call_text(const CallRecord& call);

// The program's return address of the wrapper it called.
#define MPISENTRY_CALL_SITE __builtin_return_address(0)

// The frames of a call site of this process (any module), innermost first.
std::vector<Frame> call_site_stack(const void* call_site);

// A finding of this rank, from any thread. With `own_stack`, the finding's
// first party gets the calling thread's stack (taken only if printed).
void report(report::Finding finding, bool own_stack = false);

namespace detail {
extern std::atomic<bool> error_limit_reached;
[[noreturn]] void abort_at_error_limit();
}  // namespace detail

// After the call that reported: once this rank's errors reached
// CHECK-MAX-ERRORS, prints its summary and aborts the job. The call has
// returned, so the program had MPI's own behaviour first. Inline: every
// wrapper calls it.
inline void stop_at_error_limit() {
  if (detail::error_limit_reached.load(std::memory_order_relaxed)) detail::abort_at_error_limit();
}

// From checks::finish (MPI_Finalize), once every rank is there and the
// analyses finished: world rank 0 prints the summary of every rank's
// findings and of rank 0's monitor reports. Returns, on every rank, whether
// some rank found what ERROR-EXITCODE counts: an error (a warning too, with
// WARNINGS-ARE-ERRORS) that no SUPPRESSIONS line left out.
bool finish_findings();

}  // namespace mpisentry::checks
