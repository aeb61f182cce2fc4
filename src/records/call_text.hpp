// How a recorded call reads in reports: "MPI_Send(buf=0x..., count=1,
// datatype=MPI_DOUBLE, dest=1, tag=0, comm=MPI_COMM_WORLD)". Shared by the
// monitor's snapshots and the checks' findings.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "records/call_record.hpp"
#include "records/communicators.hpp"

namespace mpisentry {

// The checker's own communicator table entry for the call's comm_id, else
// its handle; none when the checker does not know the communicator.
std::optional<comms::Info> communicator_of(const CallRecord& call);

// A predefined operation's name ("MPI_SUM"); "" for MPI_OP_NULL. User-defined
// operations are not told apart, since their handles need not agree across ranks.
std::string predefined_op_name(MPI_Op op);
// The same by number, for what ranks exchange: the operation's index among
// the predefined ones, -1 for any other; and the name of an index ("" when
// out of range).
int predefined_op_index(MPI_Op op);
const char* predefined_op_name_at(int index);

// "MPI_THREAD_FUNNELED"
std::string_view thread_level_name(int level);

class CallText {
 public:
  // Asks MPI for the predefined datatypes' names: from a thread that may call MPI.
  CallText();
  // `requests`: a view of each of a Wait/Test call's copied requests.
  std::string format(const CallRecord& call, const std::vector<RequestView>& requests) const;

 private:
  std::string arguments(const CallRecord& call, const std::vector<RequestView>& requests) const;
  std::string datatype_name(MPI_Datatype datatype) const;
  std::string window_arguments(const CallRecord& call, const std::optional<comms::Info>& info) const;

  std::unordered_map<MPI_Datatype, std::string> builtin_types_;
};

}  // namespace mpisentry
