// The messages a wrapped call sends and matches, counted in its
// communicator's tallies (records/message_tallies.hpp), for the monitor's
// account of what is in flight.
#pragma once

#include <mpi.h>

#include "records/call_record.hpp"
#include "records/communicators.hpp"
#include "records/message_tallies.hpp"

namespace mpisentry {

// The tallies a message on `comm` is counted in; lost() when they cannot be
// had, so that the account says it is incomplete rather than be wrong.
inline tallies::CommTallies* tallies_for(MPI_Comm comm) noexcept {
  tallies::CommTallies* found = comms::tallies_of(comm);
  if (found == nullptr && comm != MPI_COMM_NULL) tallies::lost();
  return found;
}

// The message that a started send, or a send-receive's send, puts under
// way: none to MPI_PROC_NULL, none for any other operation.
inline void count_started(tallies::CommTallies& tallies, const CallRecord& started) noexcept {
  if (started.peer == MPI_PROC_NULL ||
      (started.shape != CallShape::Send && started.shape != CallShape::SendReceive))
    return;
  tallies.sent(started.peer, started.tag);
}

// The send of a blocking send or send-receive, before the call: MPI may give
// its message to the receiver before the call returns.
inline void count_sent(const CallRecord& record) noexcept {
  if (record.peer == MPI_PROC_NULL) return;
  if (tallies::CommTallies* tallies = tallies_for(record.comm)) count_started(*tallies, record);
}

// What a receive, a send-receive's receive or a matching probe took, as its
// status tells: the program's, or the wrapper's own where the program
// ignores it (MPI_STATUS_IGNORE: only the pointer the call is given changes).
class MatchedMessage {
 public:
  explicit MatchedMessage(MPI_Status*& status) noexcept : status_(status) {
    if (status == MPI_STATUS_IGNORE) status = &own_;
  }
  MatchedMessage(const MatchedMessage&) = delete;
  MatchedMessage& operator=(const MatchedMessage&) = delete;
  // After the call, or once its receive is done (a send-receive's receive
  // half, whose send may never complete): counted once. `matched` false when
  // it took nothing (a probe that found nothing).
  void done(int result, MPI_Comm comm, bool matched = true) noexcept {
    if (counted_ || result != MPI_SUCCESS || !matched || status_->MPI_SOURCE < 0) return;  // MPI_PROC_NULL
    counted_ = true;
    if (tallies::CommTallies* tallies = tallies_for(comm)) tallies->matched(status_->MPI_SOURCE, status_->MPI_TAG);
  }

 private:
  MPI_Status*& status_;
  MPI_Status own_;
  bool counted_ = false;
};

}  // namespace mpisentry
