// What this host's /proc says of a lost rank's process, for the report of
// GLOBAL:RANK:LOST.
#pragma once

#include <string>

#include "monitor/channel.hpp"

namespace mpisentry::monitor {

// "stopped (SIGSTOP or a debugger)", "ended, not yet reaped, killed by
// SIGKILL", ...; empty when the rank ran on another host or its state says
// nothing.
std::string process_state(const LostRank& lost);

}  // namespace mpisentry::monitor
