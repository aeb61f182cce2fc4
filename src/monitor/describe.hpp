// Turns what the wrappers recorded into a RankSnapshot: the call with its
// arguments as text, and whom the rank waits for, as MPI_COMM_WORLD ranks.
#pragma once

#include <mpi.h>

#include <string>
#include <unordered_map>

#include "monitor/rules.hpp"
#include "report/snapshot.hpp"
#include "wrappers/call_record.hpp"

namespace mpisentry::monitor {

class Describer {
 public:
  // From MPI_Init's thread: caches what later needs no MPI call.
  explicit Describer(int world_rank);

  // `use_mpi`: name communicators and translate ranks with PMPI calls (the
  // monitor thread); without it (the signal-dump thread, which must not wait
  // for MPI's lock) ranks stay communicator-local and only built-in names
  // are used.
  RankSnapshot describe(const Activity::Sample& sample, const LocalStatus& status, bool use_mpi) const;

 private:
  struct Waits;
  std::string call_text(const CallRecord& call, bool use_mpi) const;
  std::string arguments(const CallRecord& call, bool use_mpi) const;
  std::string peer_text(int rank, MPI_Comm comm, bool use_mpi) const;
  std::string comm_name(MPI_Comm comm, bool use_mpi) const;
  std::string datatype_name(MPI_Datatype datatype) const;
  Waits waits(const CallRecord& call, bool use_mpi) const;
  Waits request_waits(const CallRecord& call, bool use_mpi) const;
  std::vector<PendingMessage> messages(const CallRecord& call, bool use_mpi) const;

  int world_rank_;
  std::string host_;
  int pid_;
  std::unordered_map<MPI_Datatype, std::string> builtin_types_;
};

}  // namespace mpisentry::monitor
