// The timing-dependent outcomes of the Wait, Test and Iprobe calls, recorded
// or forced (races/races.hpp). A forced outcome is the call itself on a
// narrowed view, repeated until it answers as recorded: a Waitany on an
// array where every request but the recorded one is hidden
// (MPI_REQUEST_NULL), an Iprobe from the recorded source. It repeats as the
// waits do (tested_wait.hpp), answering the monitor's asks, so that a hang
// under replay is reported as any other. A call that found nothing answers
// so without calling MPI. With neither recording nor replaying, a wrapper
// runs its fast body (interceptors/protocol.hpp), which tests nothing here.
#pragma once

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "interceptors/tested_wait.hpp"
#include "races/races.hpp"
#include "records/scratch_buffer.hpp"
#include "records/thread_state.hpp"

namespace mpisentry {

// A completion call, as the wrapper's own variables: the wrapper's forward
// reads them, so a replay may narrow them before it runs.
struct Completion {
  // Where the status of what it completed goes.
  enum class Layout { One, PerRequest, PerCompleted };
  FunctionId function;
  bool recorded;     // Test, Any or Some: its outcome is an event; Wait, Waitall: always the same
  races::Kind kind;  // when recorded
  int count;
  MPI_Request*& requests;  // the array (a call on one request: its address)
  MPI_Status*& statuses;
  Layout layout;
  int* flag = nullptr;      // Test*, Request_get_status
  int* index = nullptr;     // Waitany, Testany
  int* outcount = nullptr;  // Waitsome, Testsome
  int* indices = nullptr;
  // It frees or deactivates what it completes (not MPI_Request_get_status).
  bool deactivates = true;
};

namespace outcomes {

// Calls visit(index, k) for each request the call completed, by index into
// its array and the order of its status (status_of), as its outputs say.
template <typename Visit>
void for_each_completed(const Completion& call, Visit&& visit) {
  if (call.flag && !*call.flag) return;
  if (call.index) {
    if (*call.index != MPI_UNDEFINED) visit(*call.index, 0);
    return;
  }
  if (call.outcount) {
    if (*call.outcount != MPI_UNDEFINED)
      for (int k = 0; k < *call.outcount; ++k) visit(call.indices[k], k);
    return;
  }
  const int all = call.layout == Completion::Layout::One ? 1 : call.count;
  for (int i = 0; i < all; ++i) visit(i, i);
}

// The requests the call completed, by index into its array, as it says.
std::vector<int> completed_indices(const Completion& call);

// The requests a successful Wait or Test completes leave the request
// table's active set (RequestTable::complete), and the messages their
// receives took are counted as matched (records/message_tallies.hpp), by
// their statuses: the program's, or own ones in place of
// MPI_STATUS(ES)_IGNORE, for the call's time. Their handles and entries are
// taken before the call, which sets a completed one to MPI_REQUEST_NULL (at
// MPI_THREAD_MULTIPLE another thread may get a handle again as soon as MPI
// completes it), so that a completion clears the entry as it was then
// (RequestTable::see), found once. A call
// that fails leaves them active and uncounted: more in flight than is,
// never less.
class CompletedRequests {
 public:
  explicit CompletedRequests(Completion& call);
  CompletedRequests(const CompletedRequests&) = delete;
  CompletedRequests& operator=(const CompletedRequests&) = delete;
  void done(int result, Completion& call) const;

 private:
  int count_ = 0;
  bool concurrent_ = false;
  MPI_Status* program_statuses_ = nullptr;
  // Lent in place of MPI_STATUS(ES)_IGNORE: the first kCopiedRequests in
  // place, more (rare) in the thread's scratch memory.
  MPI_Status statuses_[kCopiedRequests];
  ScratchBuffer statuses_buffer_;
  // The first kCopiedRequests in place, the rest (rare) in the thread's scratch memory.
  MPI_Request handles_[kCopiedRequests];
  RequestTable::Seen seen_[kCopiedRequests];
  ScratchBuffer more_handles_buffer_, more_seen_buffer_;
  MPI_Request* more_handles_ = nullptr;
  RequestTable::Seen* more_seen_ = nullptr;
};

// Recording: the event the call's outputs are.
races::Event event_of(const Completion& call);

// Own statuses in place of MPI_STATUS(ES)_IGNORE, for the sources of the
// receives from MPI_ANY_SOURCE it completes.
void make_statuses_real(Completion& call, std::vector<MPI_Status>& own);

const MPI_Status& status_of(const Completion& call, int index, int k);

template <typename Forward>
int recorded_completion(Completion& call, Forward&& forward) {
  races::CompletingReceives receives(call.count, call.requests);
  MPI_Status* const program_statuses = call.statuses;
  std::vector<MPI_Status> own;
  if (receives.any()) make_statuses_real(call, own);
  const int result = forward();
  if (receives.any() && result == MPI_SUCCESS) {
    const std::vector<int> done = completed_indices(call);
    for (std::size_t k = 0; k < done.size(); ++k)
      receives.completed(done[k], status_of(call, done[k], static_cast<int>(k)));
  }
  call.statuses = program_statuses;
  receives.finish(result == MPI_SUCCESS);
  if (call.recorded && result == MPI_SUCCESS) races::record(event_of(call));
  return result;
}

// `forward` until `answered()`, answering the monitor's asks in between as
// a wait on `count` requests of `array`.
template <typename Forward, typename Answered>
int repeat_until(ThreadState& self, bool patient, int count, const MPI_Request* array, Forward&& forward,
                 Answered&& answered) {
  return test_until_done(
      self, patient,
      [&](int* done) {
        const int result = forward();
        *done = answered();
        return result;
      },
      [&](std::uint64_t ask) { answer_ask(self, ask, count, array); });
}

// The recorded requests `chosen` of the call's array alone, the others hidden.
class NarrowedRequests {
 public:
  NarrowedRequests(Completion& call, const std::vector<int>& chosen);
  ~NarrowedRequests();  // the chosen requests' handles, as the call left them, go back to the program's array
  NarrowedRequests(const NarrowedRequests&) = delete;
  NarrowedRequests& operator=(const NarrowedRequests&) = delete;

 private:
  Completion& call_;
  MPI_Request* program_array_;
  const std::vector<int>& chosen_;
  std::vector<MPI_Request> narrowed_;
};

// Waitsome and Testsome forced to `chosen`: repeated until each completed.
template <typename Forward>
int replayed_some(ThreadState& self, bool patient, Completion& call, const std::vector<int>& chosen,
                  Forward&& forward) {
  std::vector<MPI_Status> statuses(chosen.size());
  std::vector<bool> done(static_cast<std::size_t>(call.count), false);
  std::size_t completed = 0;
  int result = MPI_SUCCESS;
  {
    const NarrowedRequests narrowed(call, chosen);
    result = repeat_until(self, patient, call.count, call.requests, forward, [&] {
      if (*call.outcount == MPI_UNDEFINED) return true;
      for (int k = 0; k < *call.outcount; ++k) {
        const int index = call.indices[k];
        const auto at = std::find(chosen.begin(), chosen.end(), index) - chosen.begin();
        if (call.statuses != MPI_STATUSES_IGNORE) statuses[static_cast<std::size_t>(at)] = call.statuses[k];
        if (!done[static_cast<std::size_t>(index)]) ++completed;
        done[static_cast<std::size_t>(index)] = true;
      }
      return completed == chosen.size();
    });
  }
  if (result != MPI_SUCCESS) return result;
  *call.outcount = static_cast<int>(chosen.size());
  for (std::size_t k = 0; k < chosen.size(); ++k) {
    call.indices[k] = chosen[k];
    if (call.statuses != MPI_STATUSES_IGNORE) call.statuses[k] = statuses[k];
  }
  return result;
}

// Checks that a recorded index names an active request of the call.
void check_recorded_index(const Completion& call, int index);

template <typename Forward>
int replayed_completion(ThreadState& self, bool patient, Completion& call, Forward&& forward) {
  if (!call.recorded) return forward();
  const std::optional<races::Event> event = races::replayed(call.kind, call.function);
  if (!event || event->value == races::kUndefined) return forward();
  if (event->value == races::kNothing) {
    if (call.flag) *call.flag = 0;
    if (call.index) *call.index = MPI_UNDEFINED;
    if (call.outcount) *call.outcount = 0;
    return MPI_SUCCESS;
  }
  switch (call.kind) {
    case races::Kind::Test:
      return repeat_until(self, patient, call.count, call.requests, forward, [&] { return *call.flag != 0; });
    case races::Kind::Any: {
      check_recorded_index(call, event->value);
      const std::vector<int> chosen{event->value};
      const NarrowedRequests narrowed(call, chosen);
      return repeat_until(self, patient, call.count, call.requests, forward,
                          [&] { return !call.flag || *call.flag != 0; });
    }
    default:
      for (const int index : event->indices) check_recorded_index(call, index);
      return replayed_some(self, patient, call, event->indices, forward);
  }
}

// A Wait or Test call (Completion): as is with neither mode on (always in
// a wrapper's fast body, interceptors/protocol.hpp); replayed, recorded, or
// both (a run of --explore records what its replay forces).
template <bool kSlow, typename Forward>
int completion_outcome(ThreadState& self, bool patient, Completion call, Forward&& forward) {
  CompletedRequests completed(call);
  int result = MPI_SUCCESS;
  if constexpr (kSlow) {
    const auto run = [&] { return races::replaying() ? replayed_completion(self, patient, call, forward) : forward(); };
    result = !races::on() ? forward() : races::recording() ? recorded_completion(call, run) : run();
  } else {
    result = forward();
  }
  completed.done(result, call);
  return result;
}

// MPI_Iprobe and MPI_Improbe replayed: "nothing" is answered at once; a
// find probes the recorded source until its message is there, seen by the
// monitor as the wait it is: MPI_Probe (MPI_Mprobe) from that source, so
// that a forced find whose message never comes is a hang reported as one
// (an --explore schedule that cannot be followed), not a rank that polls.
template <typename Forward>
int replayed_poll(ThreadState& self, const CallRecord& record, bool patient, FunctionId function, int& source,
                  int* flag, Forward&& forward) {
  const std::optional<races::Event> event = races::replayed(races::Kind::Poll, function);
  if (!event) return forward();
  if (event->value == races::kNothing) {
    *flag = 0;
    return MPI_SUCCESS;
  }
  if (source != MPI_ANY_SOURCE && source != event->value)
    races::diverged(function, fmt::format("it probes rank {} where the recorded run found rank {}'s message", source,
                                          event->value));
  source = event->value;
  CallRecord waiting = record;
  waiting.function = function_info(function).family;  // MPI_Iprobe's is MPI_Probe, MPI_Improbe's MPI_Mprobe
  waiting.peer = source;
  self.leave(false);
  self.enter(waiting);
  const int result = repeat_until(self, patient, 0, nullptr, forward, [&] { return *flag != 0; });
  self.leave(false);
  self.enter(record);
  return result;
}

// MPI_Iprobe and MPI_Improbe: recorded as nothing or the source found. From
// MPI_PROC_NULL they always find its empty message: not recorded.
template <bool kSlow, typename Forward>
int poll_outcome(ThreadState& self, const CallRecord& record, bool patient, FunctionId function, int& source,
                 int tag, MPI_Comm comm, int* flag, MPI_Status*& status, Forward&& forward) {
  if (!kSlow || !races::on() || source == MPI_PROC_NULL) return forward();
  const int asked = source;  // a replay may set the recorded source
  const auto run = [&] {
    return races::replaying() ? replayed_poll(self, record, patient, function, source, flag, forward) : forward();
  };
  if (!races::recording()) return run();
  MPI_Status* const program_status = status;
  MPI_Status own;
  if (status == MPI_STATUS_IGNORE) status = &own;
  const int result = run();
  if (result == MPI_SUCCESS) races::polled(asked, tag, comm, *flag != 0, *status);
  status = program_status;
  return result;
}

}  // namespace outcomes
}  // namespace mpisentry
