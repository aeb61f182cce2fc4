// Which MPI implementation a loaded library file belongs to, known by its
// file name: the one list that the launcher (the program's MPI), the runtime
// (a library of the other MPI preloaded), the Fortran bindings, the signal
// handlers' origin and the stacks' trimming all read.
#pragma once

#include <optional>
#include <string_view>

namespace mpisentry::mpi_libraries {

enum class Family { mpich, open_mpi };

// The MPI this build's preloaded library is compiled and linked against.
inline constexpr Family kBuiltFor = MPISENTRY_BUILT_FOR_OPEN_MPI ? Family::open_mpi : Family::mpich;

// "MPICH" (also for its ABI family: Intel MPI, MVAPICH), "Open MPI".
std::string_view name(Family family);

// The family whose MPI library `path` is (libmpich.so.12, libmpi.so.12,
// libmpi.so.40, libopen-pal.so.40, ...); none for every other file, the
// Fortran bindings' libraries too.
std::optional<Family> family_of(std::string_view path);

// A library of an MPI's stack: MPI itself, its runtime and components, its
// process manager interface and transports (UCX, libfabric, hwloc). Their
// frames are not the program's; their signal handlers run no program code.
bool is_mpi_stack(std::string_view path);

// An MPI's Fortran bindings library whose calls of PMPI_<name> bypass the
// preloaded MPI_<name> wrappers (MPICH's f08 bindings, Open MPI's mpif.h and
// `use mpi` bindings, which its f08 bindings call).
bool is_fortran_bindings(std::string_view path);

}  // namespace mpisentry::mpi_libraries
