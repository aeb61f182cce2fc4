#include "checks/requests.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include "checks/findings.hpp"
#include "checks/messages.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::checks {

namespace detail {
bool tracking = false;
}

namespace {

enum class Kind : std::uint8_t { Send, Receive, SendReceive, Other };

// Live requests that keep their whole start stack (520 B each, about 0.3 us
// to take); past this, a request keeps only its call site.
constexpr int kMaxStacks = 4096;
std::atomic<int> stacks_held{0};

struct ReleaseStack {
  void operator()(stacks::RawStack* stack) const {
    stacks_held.fetch_sub(1, std::memory_order_relaxed);
    delete stack;
  }
};

struct Entry {
  CallRecord record;  // as started; a matched receive's comm is the probe's
  Kind kind = Kind::Other;
  bool persistent = false;
  bool active = false;
  std::uint64_t shadow = 0;    // the active send's shadow message
  std::uint64_t sequence = 0;  // start order
  bool unordered = false;      // its shadow may be another message's (receive_in_order)
  const void* call_site = nullptr;
  // Where it was started, while a LOCAL:REQUEST check is on (and kMaxStacks allow).
  std::unique_ptr<stacks::RawStack, ReleaseStack> stack;
};

struct State {
  bool not_freed_check = false;
  bool premature_free_check = false;
  std::mutex mutex;  // guards the rest
  std::unordered_map<MPI_Request, Entry> live;
  std::uint64_t next_sequence = 1;
};

State& state() {
  static State* const instance = new State;  // never destroyed: wrappers may run during exit
  return *instance;
}

bool is_persistent(FunctionId function) { return function_info(function).form == Form::Persistent; }

Kind kind_of(CallShape shape) {
  switch (shape) {
    case CallShape::Send: return Kind::Send;
    case CallShape::Receive:
    case CallShape::MatchedReceive: return Kind::Receive;
    case CallShape::SendReceive: return Kind::SendReceive;
    default: return Kind::Other;
  }
}

bool sends(Kind kind) { return kind == Kind::Send || kind == Kind::SendReceive; }

// An operation with MPI_PROC_NULL as its only peer is complete from its
// start: MPICH 4.0.2 hands every such nonblocking operation the same
// built-in handle, completes it with source 0 rather than MPI_PROC_NULL,
// and treats such a started persistent request as inactive in Waitany,
// Waitsome, Testany and Testsome. Such requests are not tracked; a send-
// receive whose receive half has no peer is a send.
Kind kind_of(const CallRecord& record) {
  const Kind kind = record.shape == CallShape::SendReceive && record.source == MPI_PROC_NULL ? Kind::Send
                                                                                             : kind_of(record.shape);
  const bool no_peer = (kind == Kind::Send || kind == Kind::Receive) && record.peer == MPI_PROC_NULL;
  return no_peer ? Kind::Other : kind;
}

bool without_peer(const CallRecord& record) {
  return kind_of(record.shape) != Kind::Other && kind_of(record) == Kind::Other;
}

std::uint64_t send_shadow_of(const CallRecord& r, const void* call_site) {
  return send_shadow(function_info(r.function).name, r.count, r.datatype, r.peer, r.tag, r.comm, call_site);
}

// Outside the lock: the new entry, with its stack when a request check wants it.
Entry make_entry(const CallRecord& record, Kind kind, const void* call_site) {
  Entry entry;
  entry.record = record;
  entry.kind = kind;
  entry.persistent = is_persistent(record.function);
  entry.active = !entry.persistent;
  entry.call_site = call_site;
  const State& s = state();
  if ((s.not_freed_check || s.premature_free_check) &&
      stacks_held.fetch_add(1, std::memory_order_relaxed) < kMaxStacks) {
    entry.stack.reset(new stacks::RawStack);
    stacks::capture_current(*entry.stack);
  } else if (s.not_freed_check || s.premature_free_check) {
    stacks_held.fetch_sub(1, std::memory_order_relaxed);
  }
  if (entry.active && sends(kind) && shadowing()) entry.shadow = send_shadow_of(record, call_site);
  return entry;
}

void insert(MPI_Request request, Entry entry) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  entry.sequence = s.next_sequence++;
  s.live[request] = std::move(entry);
}

std::vector<Frame> stack_of(const Entry& entry) {
  return entry.stack ? stacks::symbolize(*entry.stack) : call_site_stack(entry.call_site);
}

}  // namespace

void start_requests(bool not_freed_check, bool premature_free_check) {
  State& s = state();
  s.not_freed_check = not_freed_check;
  s.premature_free_check = premature_free_check;
  detail::tracking = not_freed_check || premature_free_check || shadowing();
}

void started(MPI_Request request, const CallRecord& record, const void* call_site) {
  if (record.shape == CallShape::MatchedReceive) return;  // started_matched
  if (without_peer(record)) return;
  insert(request, make_entry(record, kind_of(record), call_site));
}

void started_matched(MPI_Request request, FunctionId function, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                     const void* call_site) {
  CallRecord record;
  record.function = function;
  record.shape = CallShape::MatchedReceive;
  record.count = count;
  record.datatype = type;
  record.comm = comm;
  insert(request, make_entry(record, Kind::Receive, call_site));
}

void restarted(int count, const MPI_Request* requests, const void* call_site) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  for (int i = 0; i < count; ++i) {
    const auto found = s.live.find(requests[i]);
    if (found == s.live.end() || !found->second.persistent) continue;
    Entry& entry = found->second;
    entry.active = true;
    entry.sequence = s.next_sequence++;
    if (sends(entry.kind) && shadowing()) entry.shadow = send_shadow_of(entry.record, call_site);
  }
}

void freeing(MPI_Request request) {
  State& s = state();
  Entry entry;
  {
    const std::lock_guard lock(s.mutex);
    const auto found = s.live.find(request);
    if (found == s.live.end()) return;
    entry = std::move(found->second);
    s.live.erase(found);
  }
  if (entry.active && shadowing()) {
    const CallRecord& r = entry.record;
    if (entry.kind == Kind::Receive)
      receive_abandoned(r.comm, r.shape == CallShape::MatchedReceive ? MPI_ANY_SOURCE : r.peer,
                        r.shape == CallShape::MatchedReceive ? MPI_ANY_TAG : r.tag);
    else if (entry.kind == Kind::SendReceive)
      receive_abandoned(r.comm, r.source, r.recv_tag);
  }
  if (!s.premature_free_check || !entry.active) return;
  const char* started_by = function_info(entry.record.function).name;
  report::Finding finding;
  finding.check = report::Check::RequestPrematureFree;
  finding.summary = {fmt::format("MPI_Request_free frees the request of {} while its operation is still active:",
                                 started_by),
                     entry.kind == Kind::Receive || entry.kind == Kind::SendReceive
                         ? "the receive may still write its buffer, and nothing can tell when it has."
                         : "nothing can tell when the operation has completed."};
  finding.parties.push_back({{world_rank()}, "frees it", "MPI_Request_free(request)", {}});
  finding.parties.push_back({{world_rank()}, "started it", call_text(entry.record), stack_of(entry)});
  finding.key = fmt::format("premature free {} {}", started_by, entry.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

namespace {

bool takes_messages(const Entry& entry) {
  return entry.active && (entry.kind == Kind::Receive || entry.kind == Kind::SendReceive);
}

// Marks the pending receives on `comm` started before `before` that could
// take a message from (source, tag) as unordered; true when there were none.
// Under the lock.
bool taint_earlier_receives(State& s, MPI_Comm comm, int source, int tag, std::uint64_t before) {
  bool any = false;
  for (auto& [handle, entry] : s.live) {
    if (!takes_messages(entry) || entry.sequence >= before || entry.record.comm != comm) continue;
    const CallRecord& r = entry.record;
    const bool matched = r.shape == CallShape::MatchedReceive;
    const int wanted_source = matched ? MPI_ANY_SOURCE : entry.kind == Kind::SendReceive ? r.source : r.peer;
    const int wanted_tag = matched ? MPI_ANY_TAG : entry.kind == Kind::SendReceive ? r.recv_tag : r.tag;
    if ((wanted_source == MPI_ANY_SOURCE || wanted_source == source) && (wanted_tag == MPI_ANY_TAG || wanted_tag == tag)) {
      entry.unordered = true;
      any = true;
    }
  }
  return !any;
}

}  // namespace

bool receive_in_order(MPI_Comm comm, int source, int tag) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  return taint_earlier_receives(s, comm, source, tag, UINT64_MAX);
}

void failed(const MPI_Request* requests, int count) {
  State& s = state();
  bool receives = false;
  {
    const std::lock_guard lock(s.mutex);
    for (int i = 0; i < count; ++i) {
      const auto found = s.live.find(requests[i]);
      if (found == s.live.end()) continue;
      receives = receives || takes_messages(found->second);
      s.live.erase(found);
    }
  }
  if (receives) lost_count_of_messages();
}

void completed(const MPI_Request* requests, const MPI_Status* statuses, int count, Handle handle) {
  struct Done {
    std::uint64_t sequence;
    Receive receive;
    const MPI_Status* status;
  };
  std::vector<Done> receives;
  std::vector<std::uint64_t> cancelled_shadows;
  State& s = state();
  {
    const std::lock_guard lock(s.mutex);
    // In start order, so that a receive of this call never counts one
    // started before it, completing here too, as still pending.
    std::vector<std::pair<std::uint64_t, int>> order;
    for (int i = 0; i < count; ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      if (const auto found = s.live.find(requests[i]); found != s.live.end())
        order.emplace_back(found->second.sequence, i);
    }
    std::sort(order.begin(), order.end());
    for (const auto& [sequence, i] : order) {
      const auto found = s.live.find(requests[i]);
      if (found == s.live.end()) continue;
      Entry& entry = found->second;
      // Inactive: a persistent request not started (it completes at once),
      // or an operation whose completion was seen before, with the request kept.
      if (entry.active) {
        const CallRecord& r = entry.record;
        if (shadowing() && (entry.kind == Kind::Receive || entry.kind == Kind::SendReceive)) {
          // Receives of this call that started earlier are not pending: they come first below.
          const bool in_order = !entry.unordered && taint_earlier_receives(s, r.comm, statuses[i].MPI_SOURCE,
                                                                           statuses[i].MPI_TAG, entry.sequence);
          receives.push_back({entry.sequence,
                              {function_info(r.function).name, r.count, r.datatype, r.comm,
                               entry.kind == Kind::Receive, entry.call_site, in_order},
                              &statuses[i]});
        }
        if (sends(entry.kind) && entry.shadow != 0) {
          int cancelled = 0;
          PMPI_Test_cancelled(&statuses[i], &cancelled);
          if (cancelled) cancelled_shadows.push_back(entry.shadow);
        }
        entry.active = false;
        entry.shadow = 0;
      }
      if (handle == Handle::Released && !entry.persistent) s.live.erase(found);
    }
  }
  for (const std::uint64_t shadow : cancelled_shadows) cancel_shadow(shadow);
  std::sort(receives.begin(), receives.end(), [](const Done& a, const Done& b) { return a.sequence < b.sequence; });
  for (const Done& done : receives) received(done.receive, *done.status);
}

void finish_requests() {
  State& s = state();
  if (!s.not_freed_check) return;
  std::vector<Entry> left;
  {
    const std::lock_guard lock(s.mutex);
    for (auto& [request, entry] : s.live) left.push_back(std::move(entry));
    s.live.clear();
  }
  std::sort(left.begin(), left.end(), [](const Entry& a, const Entry& b) { return a.sequence < b.sequence; });
  for (const Entry& entry : left) {
    const char* started_by = function_info(entry.record.function).name;
    report::Finding finding;
    finding.check = report::Check::RequestNotFreed;
    finding.summary = {entry.active       ? fmt::format("A request of {} was never completed nor freed.", started_by)
                       : entry.persistent ? fmt::format("A persistent request of {} is inactive but was never freed.",
                                                        started_by)
                                          : fmt::format("A request of {} completed (MPI_Request_get_status said so) "
                                                        "but was never freed.",
                                                        started_by)};
    finding.parties.push_back({{world_rank()}, "started it", call_text(entry.record), stack_of(entry)});
    finding.key = fmt::format("not freed {} {}", started_by, entry.call_site);
    report(std::move(finding));
  }
}

void CompleteMany::finish() const {
  switch (mode_) {
    case Mode::All:
      completed(handles_.data(), statuses_, static_cast<int>(handles_.size()), Handle::Released);
      return;
    case Mode::Any:
      if (*index_ != MPI_UNDEFINED && *index_ >= 0 && *index_ < static_cast<int>(handles_.size()))
        completed(&handles_[static_cast<std::size_t>(*index_)], statuses_, 1, Handle::Released);
      return;
    case Mode::Some: {
      if (*index_ == MPI_UNDEFINED) return;
      std::vector<MPI_Request> done;
      for (int k = 0; k < *index_; ++k) done.push_back(handles_[static_cast<std::size_t>(indices_[k])]);
      completed(done.data(), statuses_, static_cast<int>(done.size()), Handle::Released);
      return;
    }
  }
}

MatchedStartCheck::MatchedStartCheck(FunctionId function, std::int64_t count, MPI_Datatype type,
                                     const MPI_Message* message, MPI_Request* request, const void* call_site)
    : on_(tracking()), function_(function), request_(request), count_(count), type_(type), call_site_(call_site) {
  if (on_ && message) comm_ = take_probed(*message);
}

int MatchedStartCheck::done(int result) const {
  if (on_ && result == MPI_SUCCESS) started_matched(*request_, function_, count_, type_, comm_, call_site_);
  return result;
}

}  // namespace mpisentry::checks
