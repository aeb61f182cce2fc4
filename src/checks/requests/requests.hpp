// What the program does with its requests: LOCAL:REQUEST:NOT_FREED (a
// request never completed nor freed by MPI_Finalize),
// LOCAL:REQUEST:PREMATURE_FREE (MPI_Request_free of a request whose
// operation is still active) and LOCAL:MEMORY:ILLEGAL_MODIFICATION of a
// request's send buffer (written before the request completed), over the
// request tracker (trackers/requests.hpp), which tells them through
// RequestCheckEvents.
#pragma once

#include "findings/findings.hpp"

namespace mpisentry::checks {

// checks/lifecycle.def, before the request tracker.
void start_request_checks(const StartContext& context);

}  // namespace mpisentry::checks
