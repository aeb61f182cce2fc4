// `mpisentry analyze [options] DIR`: reads the communication logs a run
// wrote with COMM-LOG (DIR/rank-R.log), runs analyze.hpp on them with
// standard sends buffered and with zero buffering, confirms each deadlock
// found by a run of the program forced to its matching (from the recording
// beside the logs, DIR/rank-R.record), and prints what deadlocks and why.
// The exit statuses are kExitStatuses' rows for kAnalyzeCommandName.
#pragma once

#include "launcher/command_line.hpp"

#include <span>
#include <string>
#include <string_view>

namespace mpisentry::launcher {

inline constexpr std::string_view kAnalyzeCommand = "analyze";

// What analyze --help and the man page say: the paragraph, the options, the
// exit statuses.
inline constexpr std::string_view kAnalyzeDescription =
    "Reads the communication logs that a run under mpisentry --comm-log DIR wrote (DIR/rank-R.log) and looks, "
    "without running the program, for a matching of its receives from MPI_ANY_SOURCE that deadlocks: with standard "
    "sends buffered, and with zero buffering (each standard send waiting for its receive). A deadlock found rests on "
    "the program making the logged calls under that matching, which a program whose calls follow what it receives "
    "does not: so each is confirmed by running the program again (its command line and directory are in the logs), "
    "with its receives forced to that matching from the run's recording (DIR/rank-R.record, which --comm-log writes), "
    "under --potential for zero buffering. A deadlock is reported as one only when that run hangs with a deadlock "
    "verdict; else it is reported UNCONFIRMED, with what the run showed. Prints each deadlock, the receives whose "
    "choice made it and where every rank stops.";

// Its options: --json FILE, --runs-dir DIR, --deadlock-timeout TIME, --no-confirm, --help.
std::span<const OptionSpec> analyze_options();

// The command kExitStatuses (config/exit_status.hpp) lists analyze's statuses under.
inline constexpr std::string_view kAnalyzeCommandName = "mpisentry analyze";

// --help: the form, the paragraph, the options and the exit statuses.
std::string analyze_usage();

// `words` are those after "analyze".
int run_analyze_command(std::span<const std::string> words);

}  // namespace mpisentry::launcher
