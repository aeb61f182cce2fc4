// The reports the monitor makes, built from the ranks' gathered snapshots
// (stacks already symbolized): which check, its rule in words, its threshold
// and the wait-for arcs. Pure: no MPI, no clock, no writing (the report sink
// writes them), so that each is unit-tested on made-up ranks.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "monitor/channel.hpp"
#include "monitor/verdict.hpp"
#include "monitor/wait_graph.hpp"
#include "report/report.hpp"

namespace mpisentry::monitor {

inline double to_seconds(std::chrono::microseconds d) { return std::chrono::duration<double>(d).count(); }

namespace reports {

// POTENTIAL when the mode is on and a stuck thread waits in a converted send.
report::Check check_of(const Verdict& verdict, const std::vector<RankSnapshot>& ranks, bool check_potential);

// A confirmed verdict (HARD, POTENTIAL, UNSAFE, NO_PROGRESS); `seconds_between`
// the two looks that saw it (0: not said).
report::Report verdict_report(const Verdict& verdict, double seconds_between, std::vector<RankSnapshot> ranks,
                              const config::Settings& settings);

// The verdict of a NO_PROGRESS warning for ranks that poll.
Verdict no_progress_verdict();

// DUMP: every rank's state, asked for with DUMP-SIGNAL.
report::Report dump_report(std::vector<RankSnapshot> ranks, const config::Settings& settings);

// GLOBAL:DEADLOCK:OUTSIDE_MPI: ranks blocked past DEADLOCK-WARNING wait for `outside`'s culprits.
report::Report outside_mpi_report(std::vector<RankSnapshot> ranks, const waitgraph::OutsideMpi& outside,
                                  const config::Settings& settings);

// The culprits and the functions their stacks pass through: a loop over
// several lines, or one calling small helpers (the innermost frame), is
// one place; a move to another function is news.
std::string outside_mpi_signature(const waitgraph::OutsideMpi& outside, const std::vector<RankSnapshot>& ranks);

// LOCAL:EXIT:BEFORE_MPI_FINALIZE: a rank exits without MPI_Finalize.
report::Report exit_report(std::vector<RankSnapshot> ranks);

// LOCAL:EXIT:SIGNAL as one rank tells it in JSON (its text is
// report::format_signal_dump).
report::Report signal_dump_report(const RankSnapshot& rank, int signal_number);

// GLOBAL:RANK:LOST: what a rank that outlived `lost` says of it, a line
// each. `process_state`: what this host's /proc says of its process, when
// it runs here (empty otherwise); `silence_seconds`: the silence limit.
std::vector<std::string> lost_rank_lines(const LostRank& lost, const std::string& process_state,
                                         double silence_seconds);
// The same, as JSON tells it: `lines` as the rule, this rank's state.
report::Report rank_lost_report(const RankSnapshot& rank, const std::vector<std::string>& lines);

}  // namespace reports
}  // namespace mpisentry::monitor
