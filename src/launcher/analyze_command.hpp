// `mpisentry analyze [--json FILE] DIR`: reads the communication logs a run
// wrote with COMM-LOG (DIR/rank-R.log), runs analyze.hpp on them with
// standard sends buffered and with zero buffering, and prints what deadlocks
// and why. Exit status 0: none found; 1: a deadlock found; 2: the logs could
// not be read or analyzed (the message names the file, line and problem).
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace mpisentry::launcher {

inline constexpr std::string_view kAnalyzeCommand = "analyze";

// `words` are those after "analyze".
int run_analyze_command(std::span<const std::string> words);

}  // namespace mpisentry::launcher
