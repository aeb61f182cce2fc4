// Turns what the wrappers recorded into a RankSnapshot: each thread's call
// with its arguments as text, and whom it waits for, as MPI_COMM_WORLD ranks.
//
// The mapping from a call to its waits is pure (derive_waits): it is given the
// communicators and the requests' states, so that it can be tested for every
// call shape without MPI. A wait is definite only when it holds in every
// conforming MPI implementation and rests on requests confirmed incomplete;
// waits that hold only where MPI chooses to synchronize are possible waits.
#pragma once

#include <mpi.h>

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "monitor/rounds.hpp"
#include "report/snapshot.hpp"
#include "records/call_record.hpp"
#include "records/call_text.hpp"
#include "records/communicators.hpp"
#include "records/thread_state.hpp"

namespace mpisentry::monitor {

// A communicator's members and name, for the call's comm_id or handle.
using CommunicatorLookup = std::function<std::optional<comms::Info>(const CallRecord&)>;

struct Waits {
  WaitMode mode = WaitMode::None;
  std::vector<int> definite;  // MPI_COMM_WORLD ranks
  std::vector<int> possible;
  std::uint64_t lock_window = 0;  // ThreadSnapshot::lock_window
  std::string reason;
  CollectiveCall collective;
  std::vector<StartedCollective> started_collectives;  // a Wait's or Test's nonblocking collectives
  bool converted_send = false;
  std::vector<PendingMessage> messages;  // only those of incomplete operations
};

// Whom `call` (by the thread of `world_rank`) waits for. `requests` holds a
// view of each of its copied requests (Requests shape only).
Waits derive_waits(const CallRecord& call, const std::vector<RequestView>& requests, int world_rank,
                   const CommunicatorLookup& communicator);

class Describer {
 public:
  // From MPI_Init's thread: caches what later needs no MPI call.
  explicit Describer(int world_rank);

  struct ThreadView {
    ThreadState::Sample sample;
    RankState state = RankState::Running;
    double seconds = 0;
  };
  // `ask_mpi`: confirm requests' states with MPI (the monitor thread);
  // without it (the signal-dump thread, which must not wait for MPI's lock)
  // every request's state is Unknown. `still_in_call` tells whether a
  // thread is still in the call it was sampled in, just before MPI is asked.
  RankSnapshot describe(RankState rank_state, double rank_seconds, std::uint64_t activity,
                        const std::vector<ThreadView>& threads, bool ask_mpi,
                        const std::function<bool(const ThreadState::Sample&)>& still_in_call) const;

 private:
  std::vector<RequestView> view_requests(const CallRecord& call, bool ask_mpi) const;

  int world_rank_;
  std::string host_;
  int pid_;
  CallText call_text_;
};


}  // namespace mpisentry::monitor
