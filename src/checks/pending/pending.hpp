// GLOBAL:MSG:PENDING: messages sent and never received. When a
// communicator is freed and when MPI is finalized, the records of the
// message channel (trackers/message_channel.hpp) that no receive took are
// messages nobody received, but those a receive freed while active may
// have taken. After a receive failed, which messages it consumed is not
// known, and nothing more is reported.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, after the channel.
void start_pending(const StartContext& context);

}  // namespace mpisentry::checks
