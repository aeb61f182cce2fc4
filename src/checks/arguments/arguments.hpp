// LOCAL:ARGUMENT:*: arguments that MPI defines as erroneous, judged before
// the call, which is then made as the program asked (MPI's own error
// handling unchanged; MPICH aborts on most of them with one line of its
// own, after this report is in the report file). Which argument has which
// role comes from the API spec (src/api/mpi_api.json, generate_api.py's
// argument_lines):
// - LOCAL:ARGUMENT:RANK: a dest, source or root that names no rank of the
//   communicator (its remote group for an inter-communicator), other than
//   MPI_PROC_NULL for a dest or source, MPI_ANY_SOURCE for a source,
//   MPI_ROOT or MPI_PROC_NULL for an inter-communicator's root; a
//   communicator the checker does not know is not judged;
// - LOCAL:ARGUMENT:TAG: a tag below 0 or above MPI_TAG_UB, other than
//   MPI_ANY_TAG for a receive's or a probe's;
// - LOCAL:ARGUMENT:COUNT: a count below 0;
// - LOCAL:ARGUMENT:NULL_HANDLE: MPI_COMM_NULL, MPI_DATATYPE_NULL or
//   MPI_OP_NULL given for a communicator, datatype or operation
//   (MPI_DATATYPE_NULL with a count of 0 is not judged);
// - LOCAL:ARGUMENT:UNCOMMITTED: a derived datatype the program made and
//   has not committed, given to a call that moves data (MPI 4.1, section
//   5.1.9); a datatype made by a call the checker does not wrap is not
//   judged;
// - LOCAL:ARGUMENT:NULL_BUFFER: a null buffer (MPI_BOTTOM) with a count
//   above 0 of a predefined datatype of a size above 0;
// - LOCAL:ARGUMENT:IN_PLACE: MPI_IN_PLACE for a point-to-point call's
//   buffer, a collective's receive buffer or a neighborhood collective's
//   send buffer;
// - LOCAL:ARGUMENT:ALIASED: a send buffer that is the receive buffer, both
//   with a count above 0 of predefined datatypes, and no MPI_PROC_NULL peer
//   (then nothing moves) (MPI 4.1, section 2.3:
//   no argument that MPI writes may alias another unless MPI says so).
// Buffers are judged in point-to-point calls and in collectives without a
// root; a rooted collective's are significant at the root only, or at the
// others only.
// On by default. Their findings are errors, but never the one that
// CHECK-MAX-ERRORS ends the run at: MPI's error handler decides that.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <initializer_list>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "records/communicators.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_arguments;
extern std::int64_t tag_ub;
// LOCAL:ARGUMENT:UNCOMMITTED: the derived datatypes made through the
// checker's wrappers and not committed yet, in the first kUncommittedKept
// slots (more are not judged); written under a lock, read without one.
inline constexpr int kUncommittedKept = 64;
extern std::atomic<int> uncommitted_count;
extern std::atomic<MPI_Datatype> uncommitted[kUncommittedKept];
}

// From the wrappers of the datatype constructors (`result` is the PMPI
// call's; a duplicate is committed as `like` is, a new type has like
// MPI_DATATYPE_NULL), MPI_Type_commit and MPI_Type_free.
int datatype_made(int result, const MPI_Datatype* made, MPI_Datatype like) noexcept;
void datatype_committed(MPI_Datatype datatype) noexcept;
void datatype_gone(MPI_Datatype datatype) noexcept;

// A datatype the program made and has not committed (only those in the slots).
inline bool uncommitted(MPI_Datatype datatype) noexcept {
  if (detail::uncommitted_count.load(std::memory_order_relaxed) == 0) return false;
  for (const std::atomic<MPI_Datatype>& slot : detail::uncommitted)
    if (slot.load(std::memory_order_relaxed) == datatype) return true;
  return false;
}

// checks/lifecycle.def.
void start_arguments(const StartContext& context);

inline bool watching_arguments() noexcept { return detail::watching_arguments; }

// One argument of a call, by its role.
struct Argument {
  // InPlaceBuffer: a buffer that may be MPI_IN_PLACE; Buffer: one that may not.
  enum class Role : std::uint8_t {
    Comm, Dest, Source, Root, Tag, ReceiveTag, Count, Datatype, Op, Buffer, InPlaceBuffer
  };
  Role role;
  const char* name;  // the parameter's name, for the report
  std::int64_t value = 0;  // a buffer's: its count, -1 when it has counts per rank
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;  // a buffer's too (MPI_DATATYPE_NULL: per rank)
  MPI_Op op = MPI_OP_NULL;
  const void* buffer = nullptr;
};
inline Argument comm_argument(const char* name, MPI_Comm comm) { return {Argument::Role::Comm, name, 0, comm}; }
inline Argument int_argument(Argument::Role role, const char* name, std::int64_t value) { return {role, name, value}; }
inline Argument datatype_argument(const char* name, MPI_Datatype datatype) {
  return {Argument::Role::Datatype, name, 0, MPI_COMM_NULL, datatype};
}
inline Argument op_argument(const char* name, MPI_Op op) {
  return {Argument::Role::Op, name, 0, MPI_COMM_NULL, MPI_DATATYPE_NULL, op};
}
inline Argument buffer_argument(Argument::Role role, const char* name, const void* buffer, std::int64_t count,
                                MPI_Datatype datatype) {
  return {role, name, count, MPI_COMM_NULL, datatype, MPI_OP_NULL, buffer};
}

// The exact rules, with the reports; out of line, past the wrappers' screen.
void judge_arguments(FunctionId function, std::initializer_list<Argument> arguments, const void* call_site) noexcept;

// The wrappers' screen, in every call, fast body too (the checks are on by
// default): one comparison or two per argument, that every erroneous
// argument fails and nearly every correct one passes; a call with one that
// fails goes to judge_arguments. True: judge the call.
namespace screen {
inline bool comm(MPI_Comm comm) noexcept { return comm == MPI_COMM_NULL; }
// Beyond the communicator's ranks, when the checker knows how many it has.
inline bool beyond(std::int64_t rank, MPI_Comm comm) noexcept {
  const int peers = comms::peer_count(comm);
  return peers >= 0 && rank >= peers;
}
inline bool dest(std::int64_t rank, MPI_Comm comm) noexcept {
  return rank < 0 ? rank != MPI_PROC_NULL : beyond(rank, comm);
}
inline bool source(std::int64_t rank, MPI_Comm comm) noexcept {
  return rank < 0 ? rank != MPI_PROC_NULL && rank != MPI_ANY_SOURCE : beyond(rank, comm);
}
// A root's MPI_ROOT and MPI_PROC_NULL depend on the communicator's kind: judged.
inline bool root(std::int64_t rank, MPI_Comm comm) noexcept { return rank < 0 || beyond(rank, comm); }
inline bool tag(std::int64_t tag) noexcept { return tag < 0 || tag > detail::tag_ub; }
inline bool receive_tag(std::int64_t tag) noexcept { return (tag < 0 && tag != MPI_ANY_TAG) || tag > detail::tag_ub; }
inline bool count(std::int64_t count) noexcept { return count < 0; }
inline bool datatype(MPI_Datatype datatype) noexcept {
  return datatype == MPI_DATATYPE_NULL || checks::uncommitted(datatype);
}
inline bool op(MPI_Op op) noexcept { return op == MPI_OP_NULL; }
inline bool in_place_buffer(const void* buffer, std::int64_t count) noexcept { return buffer == nullptr && count > 0; }
inline bool buffer(const void* buffer, std::int64_t count) noexcept {
  return buffer == nullptr ? count > 0 : buffer == MPI_IN_PLACE;
}
// MPI_BOTTOM (null) twice may address disjoint data through two datatypes: judged only with predefined ones.
inline bool aliased(const void* send, const void* receive) noexcept {
  return send == receive && send != nullptr && send != MPI_IN_PLACE;
}
}  // namespace screen

}  // namespace mpisentry::checks
