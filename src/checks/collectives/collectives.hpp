// GLOBAL:COLLECTIVE checks, ITC's way: before each collective every member
// exchanges one CollectiveRecord per peer (checks/collectives/match.hpp) with an
// MPI_Ialltoall on the same communicator, which MPI orders with the
// program's collectives there and keeps apart from its point-to-point
// messages. Blocking collectives wait for the exchange inside their call;
// nonblocking and persistent ones leave it pending (a wait could hang a
// correct program) and it is compared at a later collective check, when
// its communicator is freed, when the monitor asks a thread waiting on
// requests about them (a hang reaches no later collective), or in
// MPI_Finalize. INVALID_PARAMETER looks
// at the call alone, before MPI does, and such a call is not exchanged.
//
// The wrappers hold the check around the forwarded call, as the message
// checks do: (checks::bcast(...)).done(PMPI_Bcast(...)); with every
// check off it costs one flag test.
#pragma once

#include <mpi.h>

#include "findings/findings.hpp"
#include "records/call_record.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool collective_checking;  // a GLOBAL:COLLECTIVE check is on; set at start, cleared at finish
}

inline bool collective_checking() noexcept { return detail::collective_checking; }

// checks/lifecycle.def.
void start_collectives(const StartContext& context);

// Counts of one side of a collective: the same for every peer, or one per
// peer (the v-variants, int or MPI_Count).
struct Counts {
  MPI_Count same = 0;
  const int* ints = nullptr;
  const MPI_Count* large = nullptr;
  Counts(MPI_Count each) : same(each) {}
  Counts(const int* per_rank) : ints(per_rank) {}
  Counts(const MPI_Count* per_rank) : large(per_rank) {}
  MPI_Count at(int rank) const { return ints ? ints[rank] : large ? large[rank] : same; }
};

// Datatypes of one side: one, or one per peer (the w-variants).
struct Types {
  MPI_Datatype same = MPI_DATATYPE_NULL;
  const MPI_Datatype* per_rank = nullptr;
  Types(MPI_Datatype each) : same(each) {}
  Types(const MPI_Datatype* each_rank) : per_rank(each_rank) {}
  MPI_Datatype at(int rank) const { return per_rank ? per_rank[rank] : same; }
};

struct Side {
  const void* buffer;
  Counts counts;
  Types types;
};

// How the data moves between members: Pattern, in api/functions.hpp, from
// each function's entry in src/api/mpi_api.json.

inline constexpr int kNoRoot = -0x7fffffff;

struct Collective {
  FunctionId function;
  MPI_Comm comm;
  Pattern pattern;
  Side send;
  Side receive;
  int root = kNoRoot;
  MPI_Op op = MPI_OP_NULL;
  bool reduces = false;
};

// Checks `call` before it is forwarded.
void check_collective(const Collective& call);

// Before MPI_Comm_free or MPI_Comm_disconnect (`function`) frees `comm`
// (collective over it): the exchanges still pending on it are compared, and
// with COMM_FREE_MISMATCH on, the free is exchanged as a collective.
void collectives_freeing(MPI_Comm comm, FunctionId function);

// In MPI_Finalize: the exchanges still pending, within a bounded time.
void finish_collectives();

// From a thread waiting on requests when the monitor asks it about them
// (interceptors/tested_wait.hpp): the pending exchanges whose records have
// all arrived are compared now, not at a later collective that a hang
// never reaches, and a mismatch is reported before the hang.
void compare_arrived_collectives();

// The check object; its work is done when it is made.
struct CollectiveCheck {
  int done(int result) const { return result; }
};

inline CollectiveCheck checked(const Collective& call) {
  check_collective(call);
  return {};
}

inline CollectiveCheck barrier(FunctionId function, MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Barrier, {nullptr, MPI_Count{0}, MPI_DATATYPE_NULL},
                  {nullptr, MPI_Count{0}, MPI_DATATYPE_NULL}});
}

inline CollectiveCheck bcast(FunctionId function, const void* buffer, MPI_Count count, MPI_Datatype type, int root,
                             MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Bcast, {buffer, count, type}, {buffer, count, type}, root});
}

// MPI_Gather and MPI_Gatherv.
inline CollectiveCheck gather(FunctionId function, const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              const void* recvbuf, Counts recvcounts, MPI_Datatype recvtype, int root,
                              MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Gather, {sendbuf, sendcount, sendtype}, {recvbuf, recvcounts, recvtype},
                  root});
}

// MPI_Scatter and MPI_Scatterv.
inline CollectiveCheck scatter(FunctionId function, const void* sendbuf, Counts sendcounts, MPI_Datatype sendtype,
                               const void* recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Scatter, {sendbuf, sendcounts, sendtype}, {recvbuf, recvcount, recvtype},
                  root});
}

// MPI_Allgather and MPI_Allgatherv.
inline CollectiveCheck allgather(FunctionId function, const void* sendbuf, MPI_Count sendcount,
                                 MPI_Datatype sendtype, const void* recvbuf, Counts recvcounts, MPI_Datatype recvtype,
                                 MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Allgather, {sendbuf, sendcount, sendtype}, {recvbuf, recvcounts, recvtype}});
}

// MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw.
inline CollectiveCheck alltoall(FunctionId function, const void* sendbuf, Counts sendcounts, Types sendtypes,
                                const void* recvbuf, Counts recvcounts, Types recvtypes, MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked(
      {function, comm, Pattern::Alltoall, {sendbuf, sendcounts, sendtypes}, {recvbuf, recvcounts, recvtypes}});
}

// MPI_Reduce (with a root), MPI_Allreduce, MPI_Scan, MPI_Exscan: count x
// type the same everywhere.
inline CollectiveCheck reduce(FunctionId function, const void* sendbuf, MPI_Count count, MPI_Datatype type,
                              MPI_Op op, int root, MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Reduce, {sendbuf, count, type}, {sendbuf, count, type}, root, op, true});
}

// MPI_Reduce_scatter (member i sends recvcounts[j] to j) and
// MPI_Reduce_scatter_block (recvcount to everyone).
inline CollectiveCheck reduce_scatter(FunctionId function, const void* sendbuf, Counts recvcounts, MPI_Datatype type,
                                      MPI_Op op, MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::ReduceScatter, {sendbuf, recvcounts, type}, {sendbuf, recvcounts, type},
                  kNoRoot, op, true});
}

// Neighbourhood collectives: only the kind is compared.
inline CollectiveCheck neighborhood(FunctionId function, MPI_Comm comm) {
  if (!collective_checking()) return {};
  return checked({function, comm, Pattern::Neighborhood, {nullptr, MPI_Count{0}, MPI_DATATYPE_NULL},
                  {nullptr, MPI_Count{0}, MPI_DATATYPE_NULL}});
}

}  // namespace mpisentry::checks
