// The diagnostics module: the one owner of every report's shape (text, JSON,
// DOT) and of how reports reach stderr and disk.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/snapshot.hpp"

namespace mpisentry::report {

enum class Check {
  DeadlockHard,       // GLOBAL:DEADLOCK:HARD, fatal
  DeadlockPotential,  // GLOBAL:DEADLOCK:POTENTIAL, fatal
  NoProgress,         // GLOBAL:DEADLOCK:NO_PROGRESS, warning; the program goes on
  Unsafe,             // GLOBAL:DEADLOCK:UNSAFE, warning: a cycle that needs a wait only some MPIs make
};

// Fatal checks end the job; the others are warnings.
bool is_fatal(Check check);

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

// What one rank writes on its own when SIGTERM or SIGINT ends the job.
std::string format_signal_dump(const RankSnapshot& rank, int signal_number);
// How many ranks' signal dumps a report holds (each rank appends its own).
std::size_t count_signal_dumps(std::string_view report_text);

// Writes text to path and flushes it to disk (fsync). Returns an empty string
// on success, else a message that names the path and the reason.
std::string write_file(const std::string& path, const std::string& text, bool append);

}  // namespace mpisentry::report
