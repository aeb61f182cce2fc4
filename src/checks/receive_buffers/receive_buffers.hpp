// LOCAL:MEMORY:ILLEGAL_MODIFICATION of receive buffers: the bytes a
// nonblocking receive's buffer holds when the receive completed differ from
// the bytes its sender sent, so the program wrote the buffer while MPI owned
// it. Each record of the message channel (trackers/message_channel.hpp)
// carries its send buffer's checksum when summing_sends(); the receive's is
// taken in the call that completes it. Needs a GLOBAL:MSG check on (the
// channel); not at MPI_THREAD_MULTIPLE.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, after the channel.
void start_receive_buffers(const StartContext& context);

}  // namespace mpisentry::checks
