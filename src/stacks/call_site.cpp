// Where the program made a call that reached the checker through MPI's own
// code: a Fortran binding (MPICH's mpi_comm_split_) calls the C wrapper, whose
// return address is then in the binding, not on the program's line.
#include <algorithm>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "mpi_libraries/loaded.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::stacks {

const void* program_call_site(const void* call_site) {
  if (call_site == nullptr || !mpi_libraries::is_mpi_code(call_site)) return call_site;
  // This function, the checker's few frames, the wrapper, the binding's
  // frames, then the program's.
  constexpr int kFrames = 16;
  void* pcs[kFrames];
  void** const end = pcs + unw_backtrace(pcs, kFrames);
  void** const wrapper_return = std::find(pcs, end, call_site);
  if (wrapper_return == end) return call_site;
  void** const program = std::find_if(wrapper_return + 1, end, [](const void* pc) { return !mpi_libraries::is_mpi_code(pc); });
  return program == end ? call_site : *program;
}

}  // namespace mpisentry::stacks
