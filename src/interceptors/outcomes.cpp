#include "interceptors/outcomes.hpp"

#include "records/message_tallies.hpp"

namespace mpisentry::outcomes {

std::vector<int> completed_indices(const Completion& call) {
  std::vector<int> done;
  for_each_completed(call, [&done](int index, int) { done.push_back(index); });
  return done;
}

CompletedRequests::CompletedRequests(Completion& call) {
  if (!call.deactivates || call.requests == nullptr || call.count <= 0) return;
  count_ = call.count;
  concurrent_ = requests().concurrent_writers();
  const bool one = call.layout == Completion::Layout::One;
  if (call.statuses == (one ? MPI_STATUS_IGNORE : MPI_STATUSES_IGNORE)) {
    program_statuses_ = call.statuses;
    const int needed = one ? 1 : count_;
    call.statuses = needed <= kCopiedRequests ? statuses_
                                              : statuses_buffer_.get<MPI_Status>(static_cast<std::size_t>(needed));
  }
  const int inline_count = std::min(count_, kCopiedRequests);
  const int more = count_ - inline_count;
  // Loops, not std::copy_n: a copy of a length known only now is a call to memmove.
  for (int i = 0; i < inline_count; ++i) handles_[i] = call.requests[i];
  if (more > 0) {
    more_handles_ = more_handles_buffer_.get<MPI_Request>(static_cast<std::size_t>(more));
    std::copy_n(call.requests + kCopiedRequests, more, more_handles_);
  }
  for (int i = 0; i < inline_count; ++i) seen_[i] = requests().see(handles_[i]);
  if (more > 0) {
    more_seen_ = more_seen_buffer_.get<RequestTable::Seen>(static_cast<std::size_t>(more));
    for (int i = 0; i < more; ++i) more_seen_[i] = requests().see(more_handles_[i]);
  }
}

void CompletedRequests::done(int result, Completion& call) const {
  if (count_ == 0) return;
  if (result == MPI_SUCCESS)
    for_each_completed(call, [&](int index, int k) {
      if (index < 0 || index >= count_) return;
      const auto more = static_cast<std::size_t>(index - kCopiedRequests);
      const RequestTable::Completed completed =
          requests().complete(index < kCopiedRequests ? seen_[index] : more_seen_[more]);
      if (completed.tallies == nullptr) return;
      const MPI_Status& status = status_of(call, index, k);
      int cancelled = 0;
      if (completed.cancelling) PMPI_Test_cancelled(&status, &cancelled);
      if (completed.receives && !cancelled && status.MPI_SOURCE >= 0)
        completed.tallies->matched(status.MPI_SOURCE, status.MPI_TAG);
      // A cancelled send sent nothing. Above MPI_THREAD_MULTIPLE the handle
      // may name another request by now: it stays counted, more in flight.
      if (cancelled && !completed.receives && !concurrent_)
        if (CallRecord started; requests().find(index < kCopiedRequests ? handles_[index] : more_handles_[more], started))
          completed.tallies->unsent(started.peer, started.tag);
    });
  if (program_statuses_ != nullptr) call.statuses = program_statuses_;
}

races::Event event_of(const Completion& call) {
  races::Event event{call.kind, races::kNothing, {}};
  if (call.flag && !*call.flag) return event;
  if (call.index) {
    event.value = *call.index == MPI_UNDEFINED ? races::kUndefined : *call.index;
  } else if (call.outcount) {
    if (*call.outcount == MPI_UNDEFINED) {
      event.value = races::kUndefined;
    } else if (*call.outcount > 0) {
      event.value = *call.outcount;
      event.indices.assign(call.indices, call.indices + *call.outcount);
    }
  } else {
    event.value = 1;
  }
  return event;
}

void make_statuses_real(Completion& call, std::vector<MPI_Status>& own) {
  if (call.layout == Completion::Layout::One) {
    if (call.statuses != MPI_STATUS_IGNORE) return;
    own.resize(1);
  } else {
    if (call.statuses != MPI_STATUSES_IGNORE) return;
    own.resize(static_cast<std::size_t>(std::max(call.count, 1)));
  }
  call.statuses = own.data();
}

const MPI_Status& status_of(const Completion& call, int index, int k) {
  switch (call.layout) {
    case Completion::Layout::One: return call.statuses[0];
    case Completion::Layout::PerRequest: return call.statuses[index];
    case Completion::Layout::PerCompleted: break;
  }
  return call.statuses[k];
}

void check_recorded_index(const Completion& call, int index) {
  if (index >= call.count)
    races::diverged(call.function, fmt::format("the recorded run completed request {} of its array, and this call "
                                               "has {} requests",
                                               index, call.count));
  if (call.requests[index] == MPI_REQUEST_NULL)
    races::diverged(call.function, fmt::format("request {} of its array is MPI_REQUEST_NULL, and the recorded run "
                                               "completed it there",
                                               index));
}

NarrowedRequests::NarrowedRequests(Completion& call, const std::vector<int>& chosen)
    : call_(call), program_array_(call.requests), chosen_(chosen),
      narrowed_(static_cast<std::size_t>(call.count), MPI_REQUEST_NULL) {
  for (const int index : chosen_) narrowed_[static_cast<std::size_t>(index)] = program_array_[index];
  call_.requests = narrowed_.data();
}

NarrowedRequests::~NarrowedRequests() {
  for (const int index : chosen_) program_array_[index] = narrowed_[static_cast<std::size_t>(index)];
  call_.requests = program_array_;
}

}  // namespace mpisentry::outcomes
