// `mpisentry --explore [N]`: finds the hangs and crashes that another
// matching of the receives from MPI_ANY_SOURCE would show, as DAMPI does,
// and another outcome of its probes (MPI_Probe, MPI_Mprobe, MPI_Iprobe,
// MPI_Improbe). The first run records, with each such receive or probe, the
// other senders whose messages it could have taken or found (races.hpp).
// Each later run replays a schedule: a few ranks' outcomes forced as an
// earlier run had them, up to one receive or probe forced to another
// sender's message instead, the rest of the run free and recorded, so that
// it opens schedules of its own. Depth first, up to EXPLORE runs, each
// schedule changing at most EXPLORE-CHANGES outcomes.
//
// A forced receive waits for its sender's message, which that sender may
// not send in the new run: a hang while a forced outcome is still to come,
// or a replay that diverged, is the schedule's failure, not the program's,
// and is never reported as a bug. A hang after every forced outcome came,
// and any crash, are the program's: every outcome of that run is one MPI
// may give.
//
// The decisions are here, apart from running the jobs (the launcher's
// explore_command.cpp), for the tests.
#pragma once

#include <cstdint>
#include <string_view>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "recording/recording.hpp"

namespace mpisentry::offline::explore {

// A receive or probe from MPI_ANY_SOURCE made to take (a probe: find)
// another sender's message.
struct Change {
  int rank = 0;
  std::uint64_t event = 0;  // its event number in the rank's recording
  int was = 0;  // the sender it took in the run the schedule comes from (kNothing: a poll found none; kUnknown: none)
  int sender = 0;  // the sender it is forced to take
  // Probe: MPI_Probe, MPI_Mprobe; Poll: MPI_Iprobe, MPI_Improbe
  recording::Kind kind = recording::Kind::Receive;
  bool operator==(const Change&) const = default;
};

// "receive", "probe" or "nonblocking probe": what a change's kind is, in words.
std::string_view kind_name(recording::Kind kind);

// What a run forces: for some ranks, their outcomes up to their last change;
// the other ranks, and each rank after its forced outcomes, run free.
struct Schedule {
  std::map<int, std::vector<recording::Event>> forced;
  std::vector<Change> changes;  // in the order made
};

// The schedules a run opens, one per alternative sender of each receive
// past its rank's forced outcomes, in the order to explore them (the
// earliest receive first). Those that would change more than `max_changes`
// receives are only counted, in `beyond_bound`. `recordings` are the run's,
// by rank.
std::vector<Schedule> children(const Schedule& parent, const std::vector<recording::Recording>& recordings,
                               int max_changes, std::size_t& beyond_bound);

// A schedule's identity: equal schedules are explored once.
std::string key(const Schedule& schedule);

// A rank's schedule file: its recording's header, its forced outcomes and
// "free" (none forced: the header and "free").
std::string schedule_text(const recording::Header& header, const std::vector<recording::Event>* forced);

// "rank 0's receive #3 takes rank 1's message (rank 2's before)"
std::string describe(const Change& change);

// What one run left behind.
struct RunFacts {
  int exit_status = 0;  // as a shell shows it: 128 + N after signal N
  bool killed = false;  // past the explorer's time limit
  std::optional<std::string> job_report;   // REPORT-JSON's text, if written
  std::map<int, std::string> rank_reports;  // by rank: a rank's own report (LOCAL:EXIT:SIGNAL)
  std::vector<recording::Recording> recordings;  // by rank; a missing one is empty
};

enum class Verdict { Passed, Failed, Infeasible };

struct Outcome {
  Verdict verdict = Verdict::Passed;
  std::string what;  // what failed, or why the schedule could not be followed
  bool deadlock = false;  // Failed by a deadlock check's verdict (GLOBAL:DEADLOCK:HARD, POTENTIAL)
};

// The run's outcome under `schedule`. `usual_exit_status` is the first
// run's when it passed, else 0.
Outcome classify(const RunFacts& run, const Schedule& schedule, int usual_exit_status);

}  // namespace mpisentry::offline::explore
