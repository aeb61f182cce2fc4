// GLOBAL:MSG:RACE: receives and probes from MPI_ANY_SOURCE, and Waitany,
// Waitsome, Testany and Testsome calls, that with other timing could have
// got another rank's message or returned another request (the rule is in
// message_races.cpp). Judged from the message channel's records, which
// carry when each message was sent, and its receives, which carry when they
// returned; reported once per rank at MPI_Finalize. Below
// MPI_THREAD_MULTIPLE only.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, after the channel (collective over MPI_COMM_WORLD
// when the check is on).
void start_message_races(const StartContext& context);

// In MPI_Finalize, after the channel's finish: this rank's report.
void finish_message_races();

}  // namespace mpisentry::checks
