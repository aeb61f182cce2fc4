// LOCAL:MPI:CALL_FAILED: an MPI call the checker wraps returned an error
// (the program runs under MPI_ERRORS_RETURN, or its own error handler
// returned). Calls the checker leaves unwrapped (MPI_Comm_rank, the
// datatype constructors...) are not seen.
#pragma once

#include "records/call_record.hpp"

namespace mpisentry::checks {

// After `call` returned `error`: reports the call with its arguments and
// MPI's error string, when the check is on.
void call_failed(const CallRecord& call, int error) noexcept;

}  // namespace mpisentry::checks
