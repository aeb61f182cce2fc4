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

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "monitor/rounds.hpp"
#include "model/snapshot.hpp"
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
    const ThreadState* thread_state = nullptr;  // the sampled one, to ask its thread about its requests
    RankState state = RankState::Running;
    double seconds = 0;
  };
  // `ask_threads`: threads blocked in a Wait that tests its requests are
  // asked which are incomplete, and their answers awaited together up to
  // kAnswerWait (the monitor's thread); without it (the signal-dump thread,
  // which must not wait) every request's state is Unknown, as is that of
  // the requests of a thread that does not answer in time.
  RankSnapshot describe(RankState rank_state, double rank_seconds, std::uint64_t activity,
                        const std::vector<ThreadView>& threads, bool ask_threads) const;

 private:
  int world_rank_;
  std::string host_;
  int pid_;
  CallText call_text_;
};

// How long the monitor waits for the threads it asked: a waiting thread
// tests its requests many times a millisecond, a patient one at least every
// millisecond; past it, a thread's requests stay Unknown for this look.
inline constexpr std::chrono::milliseconds kAnswerWait{50};

// The call's copied requests, each with what the request table knows of its
// start and, when the call's thread answered (`incomplete`, as
// ThreadState::answer gives it), its state.
std::vector<RequestView> view_requests(const CallRecord& call, std::optional<std::uint32_t> incomplete);

}  // namespace mpisentry::monitor
