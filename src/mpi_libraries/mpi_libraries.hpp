// Which MPI implementation a library file belongs to, known by its file name:
// what the launcher has before any process runs (the libraries in `ldd`'s
// output), and what the runtime names in its refusal of a library of the
// other MPI. Names are no proof: which loaded objects are MPI's, for the
// signal handlers' origin, the stacks' trimming and the Fortran bindings, is
// known by what they are (loaded.hpp).
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

// The last component of `path`, the name a library file is known by
// (DT_NEEDED, ldd's output); the whole of a path without a '/'.
constexpr std::string_view file_name(std::string_view path) { return path.substr(path.rfind('/') + 1); }

}  // namespace mpisentry::mpi_libraries
