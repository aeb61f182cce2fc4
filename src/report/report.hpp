// The diagnostics module: the one owner of every report's shape (text, JSON,
// DOT) and of how reports reach stderr and disk.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "config/checks.hpp"
#include "model/snapshot.hpp"

namespace mpisentry::report {

// The checks' ids and severities come from config/checks.def.
using mpisentry::Check;
using mpisentry::kCheckCount;
using mpisentry::Severity;

// From the checks table: "GLOBAL:DEADLOCK:HARD", its severity, and whether
// the checker ends the job after its report (only a deadlock; the other
// fatal checks report what ends it anyway).
inline const char* check_name(Check check) { return config::check_info(check).name.data(); }
inline Severity severity(Check check) { return config::check_info(check).severity; }
inline bool aborts_job(Check check) { return config::check_info(check).ends_job; }

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
  std::size_t arcs_left_out = 0;    // more arcs than a report lists: how many are not in `arcs`
  // OUTSIDE_MPI, and a dump that finds it: ranks blocked past DEADLOCK-WARNING
  // that wait, directly or through other ranks, for the culprits, which run
  // outside MPI.
  std::vector<int> waiting;
  std::vector<int> culprits;
  int signal_number = 0;  // Dump: the signal that asked for it
  // DEADLOCK-TIMEOUT auto, and a verdict proven whatever the time: taken as
  // soon as two looks confirmed it, after no timeout.
  bool proven_at_once = false;
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
std::string compress_ranks(const std::vector<int>& ranks);

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

// GLOBAL:RANK:LOST as one rank that outlived the lost one tells it: `lost`
// (what it knows of that rank, a line each), then its own state: with its
// threads' stacks, or, first and fast, only their calls and waits.
std::string format_rank_lost(const RankSnapshot& rank, const std::vector<std::string>& lost, bool with_stacks);

// What a consistency check found, told by the rank that found it (ITC's
// ERROR and WARNING reports): the ranks grouped into classes by what they
// did, each with its call.
struct Finding {
  Check check = Check::CollectiveOperation;
  int rank = 0;                      // MPI_COMM_WORLD rank that reports
  std::vector<std::string> summary;  // what is wrong, in words to check against the code
  struct Party {
    std::vector<int> ranks;  // MPI_COMM_WORLD ranks that did the same; sorted
    std::string role;        // "call", "expect 16 B (4 x MPI_INT) from rank 0", ...
    std::string call;        // "MPI_Bcast(buffer=0x7ff..., count=4, datatype=MPI_INT, root=0, comm=MPI_COMM_WORLD)"
    std::vector<Frame> stack;  // empty when only another rank knows it
  };
  std::vector<Party> parties;
  // Two findings with the same key are repeats (CHECK-SUPPRESSION-LIMIT):
  // the check, the place and the values.
  std::string key;
  // False: an error all the same, but not one that CHECK-MAX-ERRORS ends the run at.
  bool may_end_run = true;
};

// ITC's shape: "[1] ERROR: GLOBAL:COLLECTIVE:ROOT_MISMATCH: error", the
// summary, then each party's ranks, call and stack.
std::string format_finding(const Finding& finding);

// One report as a CI system reads it (REPORT-JUNIT, REPORT-SARIF): the
// check, the rank that reported it, what is wrong, the whole text, and where
// in the program each call involved was made.
struct CiRecord {
  Check check = Check::DeadlockHard;
  int rank = 0;          // MPI_COMM_WORLD rank that reported it
  std::string message;   // what is wrong: the rule, or the finding's summary (a line each)
  std::string text;      // the report as the report file has it
  // Ranks whose call was made at the same place of the program.
  struct Place {
    std::vector<int> ranks;  // sorted
    std::string call;        // "MPI_Ssend", or the call with its arguments; empty: outside MPI
    Frame frame;             // the program's innermost frame (its file is empty without debug info)
  };
  std::vector<Place> places;  // in the order of their lowest rank
};

// A report's record: a place for each thread with a stack, of every rank in
// it. `text` is the report's text.
CiRecord ci_record(const Report& report, std::string text);
// A finding's record: a place for each party with a stack.
CiRecord ci_record(const Finding& finding, std::string text);

// The records of one run live in a file of JSON lines beside the CI reports,
// which every rank appends to and the reports are made from.
std::string ci_record_line(const CiRecord& record);  // one line, '\n' included
// Every record of `lines`; a line that is no record (cut short by a crash)
// is skipped.
std::vector<CiRecord> read_ci_records(std::string_view lines);

// JUnit XML (the Jenkins/Ant junit schema): one test case per record, a
// failure for an error; one passing test case when there is no record.
std::string format_junit(const std::vector<CiRecord>& records);
// SARIF 2.1.0: one result per record, the check as its rule; no results when
// there is no record.
std::string format_sarif(const std::vector<CiRecord>& records);

// Per check, over all ranks, for the summary at the end of the run.
struct CheckCounts {
  std::int64_t found = 0;       // every finding, printed or not
  // Not printed: found and repeated past CHECK-SUPPRESSION-LIMIT or past
  // CHECK-MAX-REPORTS, or left out by a SUPPRESSIONS line (then not found).
  std::int64_t suppressed = 0;
};
// ITC's summary lines, by `rank`: one per check found or suppressed, then
// the total ("[0] INFO: Found 3 problems (2 errors + 1 warning), 0 reports
// were suppressed."). Empty when nothing was found.
std::string format_summary(int rank, const CheckCounts (&counts)[kCheckCount]);

// Writes text to path and flushes it to disk (fsync): appended, or as the
// whole file, which a reader sees complete or not at all (written beside it
// and renamed over it). Returns an empty string on success, else a message
// that names the path and the reason.
std::string write_file(const std::string& path, const std::string& text, bool append);
// All of text to fd (a pipe, a terminal), in as few write(2) calls as it
// takes; gives up silently on an error other than EINTR.
void write_all(int fd, std::string_view text);
// write_all to stderr.
void write_stderr(std::string_view text);

}  // namespace mpisentry::report
