// Which reports are left out (SUPPRESSIONS, config/suppressions.hpp), and the
// count of the monitor's reports that leave the program running, which the
// job's exit status counts with the findings (ERROR-EXITCODE).
//
// A report is left out when a line names its check and some frame of the
// stacks it is about matches the line's pattern, innermost or not: a
// finding's stacks (each rank's of it that has one: the rank that reports,
// and the peers whose stacks came with their records), or a monitor
// report's leading ranks (the culprits of OUTSIDE_MPI, the ranks of a
// cycle), every thread of each, and every rank's when it names none.
#pragma once

#include <cstdint>
#include <vector>

#include "config/suppressions.hpp"
#include "report/report.hpp"

namespace mpisentry::report {

// From MPI_Init on, once; none before.
void set_suppressions(std::vector<config::Suppression> suppressions);
// Whether some line names `check`: a finding takes its stack only then
// before it is known to be printed.
bool may_be_suppressed(Check check);
// The line that leaves `finding` or `report` out; nullptr when none does.
const config::Suppression* suppression_for(const Finding& finding);
const config::Suppression* suppression_for(const Report& report);

// Rank 0's monitor: a report that leaves the program running was printed
// (counted) or left out (suppressed).
void count_monitor_report(Check check, bool suppressed);
CheckCounts monitor_counts(Check check);

}  // namespace mpisentry::report
