#include "trackers/requests.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "findings/findings.hpp"
#include "trackers/checksums.hpp"
#include "records/partitioned_requests.hpp"
#include "trackers/owned_buffers.hpp"
#include "trackers/race_clock.hpp"
#include "trackers/stable_map.hpp"
#include "trackers/thread_lock.hpp"
#include "records/handle_slots.hpp"

namespace mpisentry::checks {

namespace detail {
bool tracking = false;
}

namespace {

enum class Kind : std::uint8_t { Send, Receive, SendReceive, Other };

struct Entry {
  CallRecord record;  // as started (the fields its shape uses); a matched receive's comm is the probe's
  Kind kind = Kind::Other;
  bool persistent = false;
  // A partitioned request (records/partitioned_requests.hpp), known from its
  // first start, which makes its record's count the whole buffer's: one
  // partition's times the partitions (what the message checks compare).
  bool partitioned = false;
  bool active = false;
  bool unordered = false;    // its record may be another message's (receive_in_order)
  std::uint64_t sent = 0;    // the active send's record in the message channel
  std::uint64_t sequence = 0;  // start order
  const void* call_site = nullptr;
  // GLOBAL:MSG:RACE: when a Waitany, Waitsome, Testany or Testsome last
  // returned other requests while this receive was active, and where.
  std::int64_t passed_over_at = 0;
  const void* passed_over_by = nullptr;
  // LOCAL:MEMORY:ILLEGAL_MODIFICATION: taken when the operation started (a
  // partitioned send: when its last partition was readied).
  BufferChecksum sent_bytes;
  TakenBuffer buffer;         // LOCAL:MEMORY:OVERLAP: its buffer while it is active
  // datatypes_freed() when it started: a receive's type is not read at its
  // completion if a derived type was freed since (MPI allows freeing it
  // while the receive is pending, and reading a freed type crashes MPICH).
  std::uint64_t types_freed = 0;
  // The active receives in start order (below MPI_THREAD_MULTIPLE only).
  Entry* earlier = nullptr;
  Entry* later = nullptr;
};

// Live requests by handle (handle_slots::key_of).
using LiveRequests = StableMap<Entry>;

std::uint64_t key_of(MPI_Request request) { return handle_slots::key_of(request); }

// At MPI_THREAD_MULTIPLE the requests are spread over shards by handle, each
// with its lock; below it one shard serves, without locking.
constexpr std::size_t kRequestShards = 16;

struct alignas(64) RequestShard {  // a cache line of its own: threads on other shards do not take it from each other
  SpinMutex mutex;
  LiveRequests live;
};

// A receive completing in a call, below MPI_THREAD_MULTIPLE: the k-th
// request the call completed.
struct StartedReceive {
  std::uint64_t sequence;
  int k;
  Entry* entry;
  bool operator<(const StartedReceive& other) const { return sequence < other.sequence; }
};

struct RequestsState {
  RequestCheckEvents checks;  // listen_for_request_checks
  bool modification_check = false;
  bool multiple_threads = false;
  // The message channel's, when it listens (listening()).
  MessageEvents messages;
  void (*passed_over)(const void* call_site) = nullptr;  // listen_for_passed_over
  RequestShard shards[kRequestShards];
  std::uint64_t next_sequence = 1;  // below MPI_THREAD_MULTIPLE
  // The active receives in start order (below MPI_THREAD_MULTIPLE, where
  // the message checks compare types).
  Entry* first_receive = nullptr;
  Entry* last_receive = nullptr;
  std::vector<StartedReceive> receives_started;  // completed()'s, reused: below that level no two calls overlap
};

RequestsState& requests_state() {
  static RequestsState* const instance = new RequestsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

// Whether the message channel hears of the requests.
bool listening() { return requests_state().messages.send_started != nullptr; }

RequestShard& shard_of_key(std::uint64_t key) {
  RequestsState& s = requests_state();
  return s.multiple_threads ? s.shards[handle_slots::home_of<kRequestShards>(key)] : s.shards[0];
}

RequestShard& shard_of(MPI_Request request) { return shard_of_key(key_of(request)); }

// The shard's lock.
class RequestsGuard : LockIfMultiple {
 public:
  explicit RequestsGuard(RequestShard& shard) : LockIfMultiple(shard.mutex, requests_state().multiple_threads) {}
};

// Start order: process-wide below MPI_THREAD_MULTIPLE, per thread at it
// (where nothing compares the starts of two threads).
std::uint64_t next_sequence() {
  RequestsState& s = requests_state();
  if (!s.multiple_threads) return s.next_sequence++;
  thread_local std::uint64_t own = 1;
  return own++;
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

bool takes_messages(const Entry& entry) {
  return entry.active && (entry.kind == Kind::Receive || entry.kind == Kind::SendReceive);
}

// Below MPI_THREAD_MULTIPLE: the active receives' list, in start order.
void link_receive(Entry& entry) {
  RequestsState& s = requests_state();
  if (s.multiple_threads || !takes_messages(entry)) return;
  entry.earlier = s.last_receive;
  entry.later = nullptr;
  (s.last_receive ? s.last_receive->later : s.first_receive) = &entry;
  s.last_receive = &entry;
}

void unlink_receive(Entry& entry) {
  RequestsState& s = requests_state();
  if (entry.earlier == nullptr && s.first_receive != &entry) return;  // not linked
  (entry.earlier ? entry.earlier->later : s.first_receive) = entry.later;
  (entry.later ? entry.later->earlier : s.last_receive) = entry.earlier;
  entry.earlier = entry.later = nullptr;
}

// LOCAL:MEMORY:OVERLAP: a point-to-point operation's buffer is MPI's while
// it is active, into `taken` (empty). A matched receive's record has no
// buffer; a send-receive's receive buffer is not recorded.
void take_buffer(TakenBuffer& taken, const CallRecord& r, Kind kind, const void* call_site) {
  if (kind == Kind::Send)
    buffer_taken(taken, r.buffer, r.count, r.datatype, BufferUse::Read, r.function, call_site);
  else if (kind == Kind::Receive && r.shape == CallShape::Receive)
    buffer_taken(taken, r.buffer, r.count, r.datatype, BufferUse::Write, r.function, call_site);
}

std::uint64_t send_record(const CallRecord& r, const void* call_site, const BufferChecksum& data) {
  return requests_state().messages.send_started(r.function, r.count, r.datatype, r.peer, r.tag, r.comm, call_site,
                                                 data);
}

// The new entry for `request`, under its shard's lock.
void insert(MPI_Request request, const CallRecord& record, Kind kind, const void* call_site) {
  const bool persistent = is_persistent(record.function);
  const bool sends_record = !persistent && sends(kind) && listening();
  const bool summed = requests_state().modification_check && !persistent;
  // A record that carries the checksum is made once it is taken, below.
  std::uint64_t sent_record = 0;
  if (sends_record && !summed) sent_record = send_record(record, call_site, {});
  RequestShard& shard = shard_of(request);
  const RequestsGuard guard(shard);
  bool added = false;
  Entry& entry = shard.live.get(key_of(request), added);
  if (!added) {  // MPI handed the handle out again: its completion went unseen
    unlink_receive(entry);
    buffer_released(entry.buffer);
  }
  copy_used(entry.record, record);
  entry.kind = kind;
  entry.persistent = persistent;
  entry.active = !persistent;
  entry.unordered = false;
  entry.sequence = next_sequence();
  entry.call_site = call_site;
  entry.passed_over_at = 0;
  entry.passed_over_by = nullptr;
  // A persistent request's buffer is MPI's from each MPI_Start (restarted).
  // Summed under the guard, in place, and its record made there: the check
  // runs only below MPI_THREAD_MULTIPLE (start_requests), where the guard
  // locks nothing and packing may call MPI.
  if (summed)
    sum_send_buffer(record, entry.sent_bytes);
  else
    entry.sent_bytes = {};
  entry.sent = sends_record && summed ? send_record(record, call_site, entry.sent_bytes) : sent_record;
  entry.types_freed = datatypes_freed();
  // After the stale entry's buffer went, and under the lock: taken outside
  // it and stored under it again, correct buffers were reported as still
  // pending from 4 threads at MPI_THREAD_MULTIPLE, for a reason not found. A
  // datatype new to the checker is read from MPI here, whose type queries
  // take none of the checker's locks.
  entry.buffer = {};
  if (watching_overlaps() && !persistent) take_buffer(entry.buffer, record, kind, call_site);
  entry.earlier = entry.later = nullptr;
  link_receive(entry);
}

RequestView view_of(const Entry& entry) {
  return {.record = entry.record,
          .receives = entry.kind == Kind::Receive || entry.kind == Kind::SendReceive,
          .active = entry.active,
          .persistent = entry.persistent,
          .partitioned = entry.partitioned,
          .call_site = entry.call_site};
}

}  // namespace

void start_requests(const StartContext& context) {
  RequestsState& s = requests_state();
  // Not at MPI_THREAD_MULTIPLE: there the check reported a correct program
  // (tests/message_checks/msg_threads.c), for a reason not found yet.
  s.modification_check = s.checks.send_buffer_written && !context.multiple_threads;
  s.multiple_threads = context.multiple_threads;
  detail::tracking = s.checks.freed_while_active || s.checks.left_at_finalize || s.checks.send_buffer_written ||
                     watching_overlaps() || listening();
}

void listen_for_messages(const MessageEvents& events) { requests_state().messages = events; }

void listen_for_request_checks(const RequestCheckEvents& events) { requests_state().checks = events; }

void listen_for_passed_over(void (*passed_over)(const void*)) { requests_state().passed_over = passed_over; }

void started(MPI_Request request, const CallRecord& record, const void* call_site) {
  if (record.shape == CallShape::MatchedReceive) return;  // started_matched
  if (without_peer(record)) return;
  insert(request, record, kind_of(record), call_site);
}

void started_matched(MPI_Request request, FunctionId function, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                     const void* call_site) {
  CallRecord record;
  record.function = function;
  record.shape = CallShape::MatchedReceive;
  record.count = count;
  record.datatype = type;
  record.comm = comm;
  insert(request, record, Kind::Receive, call_site);
}

void restarted(int count, const MPI_Request* requests, const void* call_site) {
  for (int i = 0; i < count; ++i) {
    RequestShard& shard = shard_of(requests[i]);
    CallRecord started;
    Kind kind = Kind::Other;
    const void* started_at = nullptr;
    bool sends_record = false;
    // A partitioned send's partitions are the program's to write until
    // readied: summed at the last (partitioned_send_readied).
    const int partitions = partitioned_requests::partitions_of(requests[i]);
    const bool partitioned = partitions > 0;
    {
      const RequestsGuard guard(shard);
      Entry* entry = shard.live.find(key_of(requests[i]));
      if (!entry || !entry->persistent) continue;
      entry->active = true;
      if (partitioned && !entry->partitioned) entry->record.count *= partitions;
      entry->partitioned = partitioned;
      entry->sequence = next_sequence();
      entry->types_freed = datatypes_freed();
      entry->passed_over_at = 0;
      entry->passed_over_by = nullptr;
      link_receive(*entry);
      sends_record = sends(entry->kind) && listening();
      if (!sends_record && !requests_state().modification_check && !watching_overlaps()) continue;
      copy_used(started, entry->record);
      kind = entry->kind;
      started_at = entry->call_site;
    }
    // Outside the lock: both may call MPI.
    BufferChecksum sent_bytes;
    if (requests_state().modification_check && !partitioned) sum_send_buffer(started, sent_bytes);
    const std::uint64_t sent_record = sends_record ? send_record(started, call_site, sent_bytes) : 0;
    const RequestsGuard guard(shard);
    if (Entry* entry = shard.live.find(key_of(requests[i]))) {
      entry->sent = sent_record;
      entry->sent_bytes = sent_bytes;
      // Under the lock, as insert takes it.
      buffer_released(entry->buffer);  // restarted while active: the program's error
      if (watching_overlaps()) take_buffer(entry->buffer, started, kind, started_at);
    }
  }
}

void partitioned_send_readied(MPI_Request request) {
  if (!requests_state().modification_check) return;
  RequestShard& shard = shard_of(request);
  CallRecord whole;
  {
    const RequestsGuard guard(shard);
    const Entry* entry = shard.live.find(key_of(request));
    if (!entry || !entry->active || !entry->partitioned) return;
    copy_used(whole, entry->record);
  }
  BufferChecksum sum;
  sum_send_buffer(whole, sum);  // outside the lock: packing may call MPI
  const RequestsGuard guard(shard);
  if (Entry* entry = shard.live.find(key_of(request)); entry && entry->active) entry->sent_bytes = sum;
}

void freeing(MPI_Request request) {
  RequestsState& s = requests_state();
  RequestShard& shard = shard_of(request);
  Entry entry;
  {
    const RequestsGuard guard(shard);
    Entry* found = shard.live.find(key_of(request));
    if (!found) return;
    unlink_receive(*found);
    entry = *found;
    shard.live.erase(key_of(request));
  }
  buffer_released(entry.buffer);  // nothing can tell when MPI is done with it
  if (entry.active && listening()) {
    const CallRecord& r = entry.record;
    if (entry.kind == Kind::Receive)
      s.messages.receive_abandoned(r.comm, r.shape == CallShape::MatchedReceive ? MPI_ANY_SOURCE : r.peer,
                        r.shape == CallShape::MatchedReceive ? MPI_ANY_TAG : r.tag);
    else if (entry.kind == Kind::SendReceive)
      s.messages.receive_abandoned(r.comm, r.source, r.recv_tag);
  }
  if (entry.active && s.checks.freed_while_active) s.checks.freed_while_active(view_of(entry));
}

namespace {

// What an active receive's entry asks for: (source, tag), wildcards kept.
std::pair<int, int> wanted_by(const Entry& entry) {
  const CallRecord& r = entry.record;
  if (r.shape == CallShape::MatchedReceive) return {MPI_ANY_SOURCE, MPI_ANY_TAG};
  return entry.kind == Kind::SendReceive ? std::pair{r.source, r.recv_tag} : std::pair{r.peer, r.tag};
}

// Whether a message from (source, tag) may match a receive of (wanted
// source, wanted tag); wildcards on either side match.
bool may_match(std::pair<int, int> wanted, int source, int tag) {
  return (wanted.first == MPI_ANY_SOURCE || source == MPI_ANY_SOURCE || wanted.first == source) &&
         (wanted.second == MPI_ANY_TAG || tag == MPI_ANY_TAG || wanted.second == tag);
}

// Below MPI_THREAD_MULTIPLE: marks the active receives on `comm` started
// before `before` that could take a message from (source, tag) as
// unordered; true when there were none.
bool taint_earlier_receives(MPI_Comm comm, int source, int tag, std::uint64_t before) {
  bool any = false;
  for (Entry* entry = requests_state().first_receive; entry && entry->sequence < before; entry = entry->later) {
    if (entry->record.comm != comm || !may_match(wanted_by(*entry), source, tag)) continue;
    entry->unordered = true;
    any = true;
  }
  return !any;
}

// Below MPI_THREAD_MULTIPLE: whether an active receive started before
// `entry` could take the messages that `entry` asks for.
bool earlier_receive_competes(const Entry& entry) {
  const auto [source, tag] = wanted_by(entry);
  for (const Entry* earlier = requests_state().first_receive; earlier && earlier->sequence < entry.sequence;
       earlier = earlier->later)
    if (earlier->record.comm == entry.record.comm && may_match(wanted_by(*earlier), source, tag)) return true;
  return false;
}

}  // namespace

bool receive_in_order(MPI_Comm comm, int source, int tag) {
  return taint_earlier_receives(comm, source, tag, UINT64_MAX);
}

bool receive_active_before(MPI_Comm comm, std::uint64_t before) {
  for (const Entry* entry = requests_state().first_receive; entry && entry->sequence < before; entry = entry->later)
    if (entry->record.comm == comm) return true;
  return false;
}

struct HeldRequests::Held {
  std::uint64_t key;  // kNoKey: the table had no entry
  bool released;      // completed and its handle freed: it does not go back
  Entry entry;
};

void HeldRequests::hold(const MPI_Request* requests, int count) {
  if (!requests_state().multiple_threads || count <= 0) return;
  held_ = buffer_.get<Held>(static_cast<std::size_t>(count));
  count_ = count;
  for (int i = 0; i < count; ++i) {
    Held& held = held_[i];
    held.key = LiveRequests::kNoKey;
    held.released = false;
    if (requests[i] == MPI_REQUEST_NULL) continue;
    RequestShard& shard = shard_of(requests[i]);
    const RequestsGuard guard(shard);
    if (const Entry* entry = shard.live.find(key_of(requests[i]))) {
      held.key = key_of(requests[i]);
      held.entry = *entry;
      shard.live.erase(held.key);
    }
  }
}

void failed(const MPI_Request* requests, int count, const HeldRequests& held) {
  bool receives = false;
  for (int i = 0; i < count; ++i) {
    if (held.held()) {
      HeldRequests::Held& h = held.held()[i];
      receives = receives || (h.key != LiveRequests::kNoKey && takes_messages(h.entry));
      if (h.key != LiveRequests::kNoKey) buffer_released(h.entry.buffer);
      continue;
    }
    RequestShard& shard = shard_of(requests[i]);
    const RequestsGuard guard(shard);
    Entry* found = shard.live.find(key_of(requests[i]));
    if (!found) continue;
    receives = receives || takes_messages(*found);
    unlink_receive(*found);
    buffer_released(found->buffer);
    shard.live.erase(key_of(requests[i]));
  }
  if (receives) requests_state().messages.receive_failed();
}

void completed(const MPI_Request* requests, const int* indices, int count, const MPI_Status* statuses, Handle handle,
               const void* call_site, const HeldRequests& held) {
  struct Done {
    Receive receive;
    const MPI_Status* status;
  };
  struct Cancelled {
    std::uint64_t number;
    MPI_Comm comm;
    int dest, tag;
  };
  struct Modified {
    CallRecord started;
    const void* started_at;
    bool partitioned;
  };
  std::vector<Done> receives;
  std::vector<Cancelled> cancelled_sends;
  std::vector<Modified> modified;
  const auto request_of = [&](int k) { return requests[indices ? indices[k] : k]; };
  // Under the shard's lock, or on a held entry; true when the entry leaves
  // the table.
  const auto complete = [&](int k, Entry& entry) {
    // Inactive: a persistent request not started (it completes at once),
    // or an operation whose completion was seen before, with the request kept.
    if (entry.active) {
      const CallRecord& r = entry.record;
      if (listening() && takes_messages(entry)) {
        // Receives of this call that started earlier are not pending: they came first.
        const bool in_order = !entry.unordered && (requests_state().multiple_threads ||
                                                   taint_earlier_receives(r.comm, statuses[k].MPI_SOURCE,
                                                                          statuses[k].MPI_TAG, entry.sequence));
        if (receives.empty()) receives.reserve(static_cast<std::size_t>(count));  // not for a call without receives
        const bool known_type = entry.kind == Kind::Receive && entry.types_freed == datatypes_freed();
        Receive receive{.function = r.function,
                        .count = r.count,
                        .type = r.datatype,
                        .comm = r.comm,
                        .known_type = known_type,
                        .posted_at = entry.call_site,
                        .completed_at = call_site,
                        .buffer = r.shape == CallShape::Receive ? r.buffer : nullptr,
                        .in_order = in_order};
        if (r.shape != CallShape::MatchedReceive) {
          std::tie(receive.source, receive.tag) = wanted_by(entry);
          receive.after_active = receive.source == MPI_ANY_SOURCE && requests_state().messages.judging_races &&
                                 receive_active_before(r.comm, entry.sequence);
        }
        receive.passed_over_at = entry.passed_over_at;
        receive.passed_over_by = entry.passed_over_by;
        receives.push_back({receive, &statuses[k]});
      }
      unlink_receive(entry);
      if (sends(entry.kind) && entry.sent != 0) {
        int cancelled = 0;
        PMPI_Test_cancelled(&statuses[k], &cancelled);
        if (cancelled) cancelled_sends.push_back({entry.sent, r.comm, r.peer, r.tag});
      }
      if (entry.sent_bytes.taken && buffer_changed(entry.sent_bytes)) modified.push_back({r, entry.call_site, entry.partitioned});
      buffer_released(entry.buffer);
      entry.active = false;
      entry.unordered = false;
      entry.sent = 0;
      entry.sent_bytes = {};
    }
    return handle == Handle::Released && !entry.persistent;
  };
  if (held.held()) {
    // Nothing compares the starts of two threads: in the order given. The
    // entries not released go back.
    HeldRequests::Held* all = held.held();
    for (int k = 0; k < count; ++k) {
      HeldRequests::Held& h = all[indices ? indices[k] : k];
      if (h.key != LiveRequests::kNoKey) h.released = complete(k, h.entry);
    }
    for (int i = 0; i < held.count(); ++i) {
      HeldRequests::Held& h = all[i];
      if (h.key == LiveRequests::kNoKey || h.released) continue;
      RequestShard& shard = shard_of_key(h.key);
      const RequestsGuard guard(shard);
      bool added = false;
      Entry& entry = shard.live.get(h.key, added);
      if (added)
        entry = h.entry;
      else  // MPI handed the handle out again: this request is gone
        buffer_released(h.entry.buffer);
    }
  } else {
    // Below MPI_THREAD_MULTIPLE (at it, a call with requests holds them).
    // Receives in start order, so that a receive of this call never counts
    // one started before it, completing here too, as still pending; the
    // rest in the order given (nothing else looks at the order).
    std::vector<StartedReceive>& receives_started = requests_state().receives_started;
    receives_started.clear();
    RequestShard& shard = requests_state().shards[0];
    for (int k = 0; k < count; ++k) {
      const MPI_Request request = request_of(k);
      if (request == MPI_REQUEST_NULL) continue;
      Entry* entry = shard.live.find(key_of(request));
      if (!entry) continue;
      if (takes_messages(*entry))
        receives_started.push_back({entry->sequence, k, entry});
      else if (complete(k, *entry))
        shard.live.erase(key_of(request));
    }
    if (!std::is_sorted(receives_started.begin(), receives_started.end()))
      std::sort(receives_started.begin(), receives_started.end());
    for (const StartedReceive& started : receives_started)
      if (complete(started.k, *started.entry))
        shard.live.erase(key_of(request_of(started.k)));
  }
  const MessageEvents& messages = requests_state().messages;
  for (const Cancelled& c : cancelled_sends) messages.send_cancelled(c.number, c.comm, c.dest, c.tag);
  for (const Done& done : receives) messages.receive_completed(done.receive, *done.status);
  for (const Modified& m : modified)
    requests_state().checks.send_buffer_written(
        {.record = m.started,
         .receives = false,
         .active = true,
         .persistent = is_persistent(m.started.function),
         .partitioned = m.partitioned,
         .call_site = m.started_at});
}

void finish_requests() {
  RequestsState& s = requests_state();
  if (!s.checks.left_at_finalize) return;
  std::vector<Entry> left;
  // Every other thread is done with MPI: no lock.
  for (RequestShard& shard : s.shards) shard.live.for_each([&](std::uint64_t, const Entry& entry) { left.push_back(entry); });
  std::sort(left.begin(), left.end(), [](const Entry& a, const Entry& b) { return a.sequence < b.sequence; });
  for (const Entry& entry : left) s.checks.left_at_finalize(view_of(entry));
}


namespace {

// GLOBAL:MSG:RACE, below MPI_THREAD_MULTIPLE: the active receives that a
// Waitany, Waitsome, Testany or Testsome did not return when it returned
// others, found before those are completed, and noted as passed over when
// it returns. A receive that an active receive started before it competes
// with for messages is left out: MPI may have had to give that one the
// message first. A call on more than kMaxRequests requests is not judged
// (finding the competing receives costs a walk of the active ones each).
// The entries stay where they are while the call's returned requests are
// completed: StableMap moves no value, and only those are erased.
class PassedOver {
 public:
  static constexpr int kMaxRequests = 64;
  PassedOver(const MPI_Request* requests, int count, const int* returned, int returned_count) {
    if (!requests_state().messages.judging_races || returned_count <= 0 || count > kMaxRequests) return;
    RequestShard& shard = requests_state().shards[0];  // below MPI_THREAD_MULTIPLE
    for (int i = 0; i < count; ++i) {
      if (requests[i] == MPI_REQUEST_NULL || std::find(returned, returned + returned_count, i) != returned + returned_count)
        continue;
      Entry* entry = shard.live.find(key_of(requests[i]));
      if (entry && takes_messages(*entry) && !earlier_receive_competes(*entry)) entries_[size_++] = entry;
    }
  }
  void mark(const void* call_site) const {
    if (size_ == 0) return;
    const std::int64_t now = race_clock();
    for (int i = 0; i < size_; ++i) {
      entries_[i]->passed_over_at = now;
      entries_[i]->passed_over_by = call_site;
    }
    if (requests_state().passed_over) requests_state().passed_over(call_site);
  }

 private:
  Entry* entries_[kMaxRequests];
  int size_ = 0;
};

}  // namespace

void CompleteMany::finish() const {
  const bool any_completed = flag_ == nullptr || *flag_;
  switch (mode_) {
    case Mode::All:
      completed(handles_, nullptr, any_completed ? count_ : 0, statuses_, Handle::Released, call_site_, held_);
      return;
    case Mode::Any: {
      const bool one = any_completed && *index_ != MPI_UNDEFINED && *index_ >= 0 && *index_ < count_;
      const PassedOver passed(handles_, count_, index_, one ? 1 : 0);
      completed(handles_, index_, one ? 1 : 0, statuses_, Handle::Released, call_site_, held_);
      passed.mark(call_site_);
      return;
    }
    case Mode::Some: {
      const int returned = *index_ == MPI_UNDEFINED ? 0 : *index_;
      const PassedOver passed(handles_, count_, indices_, returned);
      completed(handles_, indices_, returned, statuses_, Handle::Released, call_site_, held_);
      passed.mark(call_site_);
      return;
    }
  }
}

}  // namespace mpisentry::checks
