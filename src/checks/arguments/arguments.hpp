// LOCAL:ARGUMENT:*: arguments that MPI defines as erroneous, judged before
// the call, which is then made as the program asked (MPI's own error
// handling unchanged; MPICH aborts on most of them with one line of its
// own, after this report is in the report file). Which argument has which
// role comes from the API spec (src/api/mpi_api.json, generate_api.py's
// argument_lines):
// - LOCAL:ARGUMENT:RANK: a dest, source or root that names no rank of the
//   communicator (its remote group for an inter-communicator), other than
//   MPI_PROC_NULL, MPI_ANY_SOURCE for a source, MPI_ROOT or MPI_PROC_NULL for
//   an inter-communicator's root; a communicator the checker did not see
//   made is not judged;
// - LOCAL:ARGUMENT:TAG: a tag below 0 or above MPI_TAG_UB, other than
//   MPI_ANY_TAG for a receive's or a probe's;
// - LOCAL:ARGUMENT:COUNT: a count below 0;
// - LOCAL:ARGUMENT:NULL_HANDLE: MPI_COMM_NULL, MPI_DATATYPE_NULL or
//   MPI_OP_NULL given for a communicator, datatype or operation
//   (MPI_DATATYPE_NULL with a count of 0 is not judged).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <initializer_list>

#include "api/functions.hpp"
#include "findings/findings.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_arguments;
}

// checks/lifecycle.def.
void start_arguments(const StartContext& context);

inline bool watching_arguments() noexcept { return detail::watching_arguments; }

// One argument of a call, by its role.
struct Argument {
  enum class Role : std::uint8_t { Comm, Dest, Source, Root, Tag, ReceiveTag, Count, Datatype, Op };
  Role role;
  const char* name;  // the parameter's name, for the report
  std::int64_t value = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  MPI_Op op = MPI_OP_NULL;
};
inline Argument comm_argument(const char* name, MPI_Comm comm) { return {Argument::Role::Comm, name, 0, comm}; }
inline Argument int_argument(Argument::Role role, const char* name, std::int64_t value) { return {role, name, value}; }
inline Argument datatype_argument(const char* name, MPI_Datatype datatype) {
  return {Argument::Role::Datatype, name, 0, MPI_COMM_NULL, datatype};
}
inline Argument op_argument(const char* name, MPI_Op op) {
  return {Argument::Role::Op, name, 0, MPI_COMM_NULL, MPI_DATATYPE_NULL, op};
}

// Before a call of `function` with these arguments.
void check_arguments(FunctionId function, std::initializer_list<Argument> arguments, const void* call_site) noexcept;

}  // namespace mpisentry::checks
