// The diagnostics module: the one owner of every report's shape (text, JSON,
// DOT) and of how reports reach stderr and disk.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/snapshot.hpp"

namespace mpisentry::report {

enum class Check {
  DeadlockHard,        // GLOBAL:DEADLOCK:HARD, fatal: the checker aborts the job
  DeadlockPotential,   // GLOBAL:DEADLOCK:POTENTIAL, fatal: the checker aborts the job
  NoProgress,          // GLOBAL:DEADLOCK:NO_PROGRESS, warning; the program goes on
  Unsafe,              // GLOBAL:DEADLOCK:UNSAFE, warning: a cycle that needs a wait only some MPIs make
  OutsideMpi,          // GLOBAL:DEADLOCK:OUTSIDE_MPI, warning: ranks wait long for ranks outside MPI
  ExitSignal,          // LOCAL:EXIT:SIGNAL, fatal: a rank got a signal that ends it
  ExitBeforeFinalize,  // LOCAL:EXIT:BEFORE_MPI_FINALIZE, fatal: a rank exits without MPI_Finalize
  Dump,                // DUMP: every rank's state on request, not a check; the program goes on
};

enum class Severity { Fatal, Warning, Info };
Severity severity(Check check);
// Only a deadlock makes the checker end the job; the other fatal checks
// report what ends it anyway.
bool aborts_job(Check check);

const char* check_name(Check check);  // "GLOBAL:DEADLOCK:HARD"

struct Report {
  Check check = Check::DeadlockHard;
  double threshold_seconds = 0;     // DEADLOCK-TIMEOUT, or DEADLOCK-WARNING for NoProgress
  const char* threshold_key = "DEADLOCK-TIMEOUT";
  bool partial = false;             // a deadlock among some ranks while others still run
  // Which rule fired, in words a user can check against the code: "every
  // rank of the cycle waits in a call that cannot return before the next
  // rank acts; requests confirmed incomplete; no progress in 2 looks 0.3 s apart".
  std::string rule;
  std::vector<RankSnapshot> ranks;  // one per rank, sorted by rank
  DeadlockCore core;                // empty when the graph names no core
  std::vector<WaitArc> arcs;        // the arcs the analysis used, for the DOT graph and the JSON
  // OUTSIDE_MPI, and a dump that finds it: ranks blocked past DEADLOCK-WARNING
  // that wait, directly or through other ranks, for the culprits, which run
  // outside MPI.
  std::vector<int> waiting;
  std::vector<int> culprits;
  int signal_number = 0;  // Dump: the signal that asked for it
};

// Ranks whose threads' calls and stacks print the same, printed once.
struct RankClass {
  std::vector<int> ranks;  // sorted
  const RankSnapshot* representative = nullptr;  // lowest rank of the class
  std::vector<const RankSnapshot*> members;      // in the order of ranks
};

// The snapshot of `rank`, or of thread `id` of a rank; nullptr when absent.
const RankSnapshot* find_rank(const std::vector<RankSnapshot>& ranks, int rank);
const ThreadSnapshot* find_thread(const RankSnapshot& rank, int id);

// The ranks whose classes a report shows first: the culprits, else the ranks
// that exit, else the deadlock's.
DeadlockCore leading_ranks(const Report& report);

// "SIGSEGV", or "signal 70" for a number with no name.
std::string signal_name(int signal_number);

// "0-511,513-1023"; input need not be sorted; duplicates are ignored.
std::string compress_ranks(std::vector<int> ranks);

// Groups ranks with the same state and the same threads (each thread's id,
// state, function and stack); classes holding core ranks come first, then by
// lowest rank. The classes point into `ranks`.
std::vector<RankClass> merge_stacks(const std::vector<RankSnapshot>& ranks, const DeadlockCore& core);

// ITC's shape: every line starts "[0] ERROR: " (or "[0] WARNING: ", "[0] INFO: ").
std::string format_text(const Report& report);
std::string format_json(const Report& report);
std::string format_dot(const Report& report);

// What one rank writes on its own when a signal ends it: SIGTERM or SIGINT
// (every rank writes one), or a fatal signal such as SIGSEGV, for which
// `fault_address`, when not empty, says where ("0x0").
std::string format_signal_dump(const RankSnapshot& rank, int signal_number, std::string_view fault_address = {});
// How many ranks' signal dumps a report holds (each rank appends its own).
std::size_t count_signal_dumps(std::string_view report_text);

// Writes text to path and flushes it to disk (fsync). Returns an empty string
// on success, else a message that names the path and the reason.
std::string write_file(const std::string& path, const std::string& text, bool append);

}  // namespace mpisentry::report
