// Every exit status of the mpisentry command and of the jobs it runs, in one
// table: the launcher's and the subcommands' --help and the man page's EXIT
// STATUS section are written from it, and a test holds the README's "Exit
// status" table to it. The statuses the checker itself gives are named here,
// for the library (which ends jobs) and the launcher alike.
#pragma once

#include <string_view>

#include "config/checks.hpp"

namespace mpisentry::config {

// The checker stopped the job before the program ran its own code.
inline constexpr int kStoppedStatus = 2;
// A deadlock verdict (GLOBAL:DEADLOCK:HARD or POTENTIAL) ended the job with
// MPI_Abort. Not 1, which programs use for their own failures, nor 2, 126,
// 127 or 128 and above, which the shell and the launchers use; an unusual
// number, as the sanitizers choose (ThreadSanitizer's 66, MemorySanitizer's
// 77), so that a script can tell a hang from any other failure.
inline constexpr int kDeadlockStatus = 86;
// CHECK-MAX-ERRORS ended the job and ERROR-EXITCODE is not set: ITC's status.
inline constexpr int kErrorLimitStatus = 1;
// A subcommand (analyze, dump, report) or an exploration could not do its
// work: bad input, a file it cannot read or write.
inline constexpr int kCommandFailedStatus = 2;
// The launcher cannot run the job's command, or the library refuses to run
// in a program of the other MPI: the shell's "command not found".
inline constexpr int kCannotRunStatus = 127;

// Whether a finding of `severity` counts for ERROR-EXITCODE: errors, and
// warnings with WARNINGS-ARE-ERRORS; information never. The fatal reports
// end the job with statuses of their own.
inline bool counts_for_exit_status(Severity severity, bool warnings_are_errors) {
  return severity == Severity::Error || (severity == Severity::Warning && warnings_are_errors);
}

struct ExitStatus {
  std::string_view command;  // "mpisentry", "mpisentry analyze", ...
  std::string_view status;   // "0", "ERROR-EXITCODE", "128+N"
  std::string_view meaning;
};

// In the order the README and the man page list them; the numbers are
// spelled out because the README shows them as text.
inline constexpr ExitStatus kExitStatuses[] = {
    {"mpisentry", "0",
     "every rank ended with 0 and, with ERROR-EXITCODE set, no rank found an error that counts (without it, "
     "findings are reported and leave the status alone)"},
    {"mpisentry", "the program's",
     "the program's own status when the checker found nothing that counts or ERROR-EXITCODE is not set; "
     "mpiexec (Hydra) gives the bitwise OR of the ranks' statuses"},
    {"mpisentry", "ERROR-EXITCODE",
     "some rank found an error that no SUPPRESSIONS line matches (a warning too, with WARNINGS-ARE-ERRORS): "
     "every rank that reaches MPI_Finalize ends with this status, whatever its own; also the abort at "
     "CHECK-MAX-ERRORS"},
    {"mpisentry", "1", "CHECK-MAX-ERRORS errors ended the job (MPI_Abort) and ERROR-EXITCODE is not set"},
    {"mpisentry", "2",
     "nothing ran: a bad option, setting, config file or SUPPRESSIONS file, ranks that run different "
     "checkers, no libmpisentry.so found; every rank stops in MPI_Init before the program's code"},
    {"mpisentry", "86",
     "a deadlock: GLOBAL:DEADLOCK:HARD or POTENTIAL was reported and the job ended with MPI_Abort, whatever "
     "ERROR-EXITCODE says"},
    {"mpisentry", "127", "the launcher line's command cannot be run"},
    {"mpisentry", "the signal's",
     "a rank ended by signal N, which LOCAL:EXIT:SIGNAL reports, whatever ERROR-EXITCODE says: mpiexec (Hydra) "
     "ends with N (11 for SIGSEGV); a shell shows 128+N when the launcher itself is killed by N"},
    {"mpisentry --explore", "0", "no run failed"},
    {"mpisentry --explore", "1", "some run failed: a hang, a crash, a report or another exit status than the first run's"},
    {"mpisentry --explore", "2", "the exploration could not run (EXPLORE-DIR, the first run)"},
    {"mpisentry --explore", "128+N", "stopped by signal N (Ctrl-C)"},
    {"mpisentry analyze", "0", "no deadlock found"},
    {"mpisentry analyze", "1",
     "a deadlock found and confirmed: a run forced to its matching hung with a deadlock verdict"},
    {"mpisentry analyze", "2",
     "the logs could not be read or analyzed (the message names the file, line and problem), or a bad option"},
    {"mpisentry analyze", "3",
     "deadlocks found, none confirmed: each run forced to a matching passed, ended otherwise or could not follow "
     "it, or none could be made (no recording beside the logs, --no-confirm)"},
    {"mpisentry analyze", "128+N", "stopped by signal N (Ctrl-C) during a confirming run"},
    {"mpisentry dump", "0", "the dump signal was sent to every rank of the job"},
    {"mpisentry dump", "2", "nothing or not everything was sent: the message says why"},
    {"mpisentry report", "0", "the page was written"},
    {"mpisentry report", "2", "the JSON report could not be read or the page not written"},
};

}  // namespace mpisentry::config
