// LOCAL:MEMORY:OVERLAP over the buffers MPI owns (trackers/owned_buffers.hpp):
// an operation handed MPI bytes that a pending operation owns, and not both
// only read them.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, after the owned buffers' tracker: watches them when
// LOCAL:MEMORY:OVERLAP is on.
void start_buffer_overlaps(const StartContext& context);

}  // namespace mpisentry::checks
