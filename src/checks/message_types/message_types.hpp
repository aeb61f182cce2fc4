// GLOBAL:MSG:DATATYPE:MISMATCH: a message's type signature as received
// differs from the one it was sent with. MPI requires them to match (MPI
// 4.0, 3.3.1), up to the bytes received; each pair of a record and its
// receive from the message channel (trackers/message_channel.hpp) is
// compared by the receiving rank, the receive's signature cut to the bytes
// it got. Not judged: truncated receives (MPI's own error) and messages of
// a program at MPI_THREAD_MULTIPLE, whose records may pair with another
// thread's receive.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, after the channel.
void start_message_types(const StartContext& context);

}  // namespace mpisentry::checks
