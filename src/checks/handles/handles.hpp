// LOCAL:COMM:NOT_FREED, LOCAL:GROUP:NOT_FREED, LOCAL:OP:NOT_FREED,
// LOCAL:DATATYPE:NOT_FREED, LOCAL:WIN:NOT_FREED, LOCAL:FILE:NOT_FREED and
// LOCAL:INFO:NOT_FREED: every handle the program made with a wrapped call
// and has not freed, with the call and its call site, reported at
// MPI_Finalize. A handle counts the times it was handed out: MPICH hands out
// one group handle again for each MPI_Comm_group of one communicator, and
// each must be freed. Null handles and MPI_GROUP_EMPTY are never counted;
// handles of calls the checker does not wrap (MPI_Comm_get_parent,
// MPI_Comm_join, MPI_Type_get_contents, the removed MPI-1 type constructors)
// are not tracked, so their frees are ignored too. The checker's own
// handles are made through PMPI and never seen.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "records/handle_slots.hpp"

namespace mpisentry::checks {

enum class HandleKind : std::uint8_t { Comm, Group, Op, Datatype, Win, File, Info };

namespace detail {
extern bool tracking_handles;  // a NOT_FREED check of a handle is on; set at start, then read only
void handle_made(HandleKind kind, std::uint64_t key, FunctionId function, const void* call_site);
void handle_freed(HandleKind kind, std::uint64_t key);
}  // namespace detail

inline bool tracking_handles() noexcept { return detail::tracking_handles; }

// checks/lifecycle.def.
void start_handles(const StartContext& context);

// A call made `handle` of `kind` (a wrapper, after the call succeeded).
template <typename Handle>
void made(HandleKind kind, Handle handle, FunctionId function, const void* call_site) {
  if (tracking_handles()) detail::handle_made(kind, handle_slots::key_of(handle), function, call_site);
}

// A call on `handle` freed it (after the call succeeded; the handle as it
// was before the call, which sets it to the null handle).
template <typename Handle>
void freed(HandleKind kind, Handle handle) {
  if (tracking_handles()) detail::handle_freed(kind, handle_slots::key_of(handle));
}

// The wrapper of a local constructor: `result` is its PMPI call's.
template <typename Handle>
int made_by(int result, HandleKind kind, const Handle* handle, FunctionId function, const void* call_site) {
  if (result == MPI_SUCCESS && handle) made(kind, *handle, function, call_site);
  return result;
}

// The wrapper of MPI_Group_free, MPI_Op_free, MPI_Info_free and MPI_Type_free.
template <typename Handle>
int freed_by(int (*free)(Handle*), HandleKind kind, Handle* handle) {
  if (!tracking_handles() || !handle) return free(handle);
  const Handle freeing = *handle;
  const int result = free(handle);
  if (result == MPI_SUCCESS) freed(kind, freeing);
  return result;
}

// In MPI_Finalize: every handle still counted, in the order they were made.
void finish_handles();

}  // namespace mpisentry::checks
