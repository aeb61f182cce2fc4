// The MPI functions the program calls: each records the call in the calling
// thread's ThreadState, hands it to the checks that are on, and forwards it
// to PMPI. MPI_Init, MPI_Finalize and MPI_Abort are the runtime's.
#pragma once

namespace mpisentry::interceptors {

// What the wrappers do differently, decided once in MPI_Init.
struct Mode {
  bool potential = false;      // standard sends run as synchronous ones (GLOBAL:DEADLOCK:POTENTIAL)
  bool patient_waits = false;  // blocking waits run as tested nonblocking ones (patient_wait.hpp)
};

// From MPI_Init, before the program's first wrapped call.
void start(const Mode& mode);

}  // namespace mpisentry::interceptors
