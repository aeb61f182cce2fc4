// What the wrappers record about MPI calls, for the monitor to read: the
// call a thread is in, and what each pending request was started as.
// Writers are the program's threads inside wrappers: plain stores only, no
// locks, no allocation, no system calls, no clock. The monitor thread reads
// through seqlocks and does all the timing itself.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <thread>
#include <type_traits>

#include "api/functions.hpp"

namespace mpisentry {

// How the arguments are laid out, which decides how the call is printed and
// whom it waits for.
enum class CallShape : std::uint8_t {
  None,
  Send,            // peer = dest
  Receive,         // peer = source (may be MPI_ANY_SOURCE)
  Probe,           // peer = source, no buffer
  SendReceive,     // peer/tag = dest/sendtag, source/recv_tag = the receive half
  MatchedReceive,  // MPI_Mrecv: the peer is in the message handle, unknown here
  Collective,      // every rank of comm takes part
  Rooted,          // collective with peer = root
  Neighborhood,    // collective over the topology's neighbours only
  Requests,        // Wait/Test family over request_count requests
  Window,          // RMA synchronization on a window: peer = target rank
  FileCollective,  // MPI-IO collective over the file's communicator, counted on the file's id
  FileAccess,      // independent MPI-IO: waits for no other rank
  Connection,      // accept/connect/spawn/join: waits for processes outside the job
  Opaque,          // a request-creating call whose completion the checker cannot read
  Finalize,
};

// The first requests of a Wait/Test call's array, copied when the call
// starts: the monitor never reads the program's array.
inline constexpr int kCopiedRequests = 16;

struct FileFields {
  MPI_File handle;
  std::int64_t offset;  // explicit-offset calls; -1 for the others
};

// comm_id is the window's communicator's; `id` the window's own, on which
// MPI_Win_fence and MPI_Win_free count as its sequence-th collective.
struct WindowFields {
  MPI_Win handle;
  int assertion;
  std::uint64_t id;
  int lock_type;
  int group_size;              // members of the epoch's group (start/complete: targets, post/wait: origins)
  int group[kCopiedRequests];  // the group's first members, as window ranks
};

// A persistent collective's request (records/persistent_collectives.hpp):
// its id, and which start of it is the last (0 before the first).
struct PersistentFields {
  std::uint64_t id;
  std::uint64_t start;
};

// Which halves of a send-receive (CallShape::SendReceive) may still be
// incomplete.
enum class Halves : std::uint8_t {
  Either,          // one of them, which is not known (MPI_Sendrecv_replace, an MPI_Isendrecv request)
  ReceivePending,  // the receive is not done; the send may be (MPI_Sendrecv, done as its halves)
  SendPending,     // the receive is done, the send is not
};

struct CallRecord {
  // Point-to-point calls and starts store only up to comm_id; a Sendrecv
  // also source and recv_tag; collectives, Wait/Test and the rest up to
  // sequence, then what their shape has in the union below
  // (for_each_used_field).
  FunctionId function = FunctionId::None;
  CallShape shape = CallShape::None;
  bool converted_send = false;  // a standard send that potential mode made synchronous
  // A Wait whose thread tests its requests itself and answers the monitor's
  // asks (interceptors/tested_wait.hpp).
  bool tests_requests = false;
  Halves halves = Halves::Either;
  int peer = MPI_PROC_NULL;
  int tag = 0;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  std::int64_t count = 0;
  const void* buffer = nullptr;
  // Collectives, and requests' starts: the communicator's identity, taken at
  // the start because a communicator may be freed while its requests are
  // pending; collectives also count themselves on it.
  std::uint64_t comm_id = 0;
  int source = MPI_PROC_NULL;
  int recv_tag = 0;
  int request_count = 0;
  MPI_Op op = MPI_OP_NULL;
  std::uint64_t sequence = 0;
  // What only some shapes use, after the common fields, so that other calls
  // store none of it (for_each_used_field). Wrappers set every field their
  // shape uses.
  union {
    MPI_Request requests[kCopiedRequests];  // Requests: min(request_count, kCopiedRequests) of them
    FileFields file;                        // FileCollective, FileAccess
    WindowFields window;                    // Window
    PersistentFields persistent;            // Collective and Rooted, of a persistent collective's init
  };

};
static_assert(std::is_trivially_copyable_v<CallRecord>);

// Calls visit(field of to, the same field of from) for each field that a
// record of `from`'s shape uses, in the record's order; visit returns the
// field's value, from which the shape and the arrays' lengths are read. The
// one list of which shape uses which fields: SharedRecord's writer and
// reader, and copy_used, go by it, so that a call stores only what its
// shape needs and a reader reads no field it did not store.
template <typename To, typename From, typename Visit>
[[gnu::always_inline]] inline void for_each_used_field(To& to, From& from, Visit&& visit) {
  const FunctionId function = visit(to.function, from.function);
  const CallShape shape = visit(to.shape, from.shape);
  visit(to.converted_send, from.converted_send);
  visit(to.tests_requests, from.tests_requests);
  visit(to.halves, from.halves);
  visit(to.peer, from.peer);
  visit(to.tag, from.tag);
  visit(to.comm, from.comm);
  visit(to.datatype, from.datatype);
  visit(to.count, from.count);
  visit(to.buffer, from.buffer);
  visit(to.comm_id, from.comm_id);
  switch (shape) {
    case CallShape::None:
    case CallShape::Send:
    case CallShape::Receive:
    case CallShape::Probe:
    case CallShape::MatchedReceive:
    case CallShape::Opaque:
    case CallShape::Finalize: return;
    default: break;
  }
  visit(to.source, from.source);
  visit(to.recv_tag, from.recv_tag);
  if (shape == CallShape::SendReceive) return;
  const int request_count = visit(to.request_count, from.request_count);
  visit(to.op, from.op);
  visit(to.sequence, from.sequence);
  switch (shape) {
    case CallShape::Requests:
      for (int i = 0; i < std::clamp(request_count, 0, kCopiedRequests); ++i) visit(to.requests[i], from.requests[i]);
      return;
    case CallShape::FileCollective:
    case CallShape::FileAccess:
      visit(to.file.handle, from.file.handle);
      visit(to.file.offset, from.file.offset);
      return;
    case CallShape::Window: {
      visit(to.window.handle, from.window.handle);
      visit(to.window.assertion, from.window.assertion);
      visit(to.window.id, from.window.id);
      visit(to.window.lock_type, from.window.lock_type);
      const int members = visit(to.window.group_size, from.window.group_size);
      for (int i = 0; i < std::clamp(members, 0, kCopiedRequests); ++i) visit(to.window.group[i], from.window.group[i]);
      return;
    }
    case CallShape::Collective:
    case CallShape::Rooted:
      if (function_info(function).form != Form::Persistent) return;
      visit(to.persistent.id, from.persistent.id);
      visit(to.persistent.start, from.persistent.start);
      return;
    default: return;
  }
}

// Copies the fields `from`'s shape uses into `to`.
inline void copy_used(CallRecord& to, const CallRecord& from) noexcept {
  for_each_used_field(to, from, [](auto& field, const auto& value) { return field = value; });
}

// A CallRecord that one thread writes and another reads without tearing: a
// seqlock whose writer stores each field the record's shape uses in place,
// an atomic store with release order, and whose reader loads them with
// acquire order; readers retry, writers never wait. Field by field rather
// than word by word from a record built first: a word gathered from fields
// just stored on the stack waits for them (x86 cannot forward narrow stores
// to a wider load), where a wrapper's constant fields and arguments now go
// straight to their place. A reader must look only at the fields the
// record's shape uses.
class SharedRecord {
 public:
  // Inline, so that a wrapper's constant shape folds the list of fields to
  // a few stores.
  [[gnu::always_inline]] void store(const CallRecord& record) noexcept {
    const std::uint64_t seq = sequence_.load(std::memory_order_relaxed);
    sequence_.store(seq + 1, std::memory_order_relaxed);
    // Release stores rather than relaxed ones after a release fence: a reader
    // that sees a new field then sees the odd sequence before it. The same
    // plain stores on x86, and ThreadSanitizer, which ignores fences, sees the
    // ordering.
    for_each_used_field(shared_record(), record, [](auto& shared, const auto& value) {
      std::atomic_ref(shared).store(value, std::memory_order_release);
      return value;
    });
    sequence_.store(seq + 2, std::memory_order_release);
  }
  // False when a write overlapped the read; the caller retries later.
  bool load(CallRecord& out) const noexcept;

 private:
  // The record lives in zeroed bytes (a CallRecord, an aggregate, is made
  // there implicitly): constant-initialized, where a CallRecord's own
  // initializers are not constants under Open MPI (MPI_COMM_NULL is an
  // address). Accessed through std::atomic_ref only.
  CallRecord& shared_record() const noexcept { return *std::launder(reinterpret_cast<CallRecord*>(storage_)); }
  std::atomic<std::uint64_t> sequence_{0};  // odd while a write is under way
  alignas(CallRecord) mutable unsigned char storage_[sizeof(CallRecord)]{};
};

// What each request was started as, so that a Wait knows whom it waits
// for, and which requests are active: started and not yet completed by a
// Wait or Test, whatever their thread does now (a peer's wait that one of
// them can end is no wait at all). Every request-creating MPI function is
// wrapped, so a handle that MPI hands out again overwrites the entry of the
// request it was before. Fixed size and lock-free: a full table overwrites
// old entries and a lookup then finds nothing, which the monitor treats as
// "unknown"; an active request overwritten so, or freed while active by
// MPI_Request_free beyond what the freed list holds, makes the active set
// incomplete (lost_active), which the monitor treats as "anything may be
// active". The request checks keep an exact table of their own
// (trackers/requests.hpp), only while they are on.
namespace tallies {
class CommTallies;
}  // namespace tallies

class RequestTable {
  struct Slot;

 public:
  static constexpr std::size_t kSlots = 8192;
  // Requests freed by MPI_Request_free while active: they go on without a
  // handle, and no Wait tells when they end, so they stay active for good.
  // Equal ones (the same shape, peer, tag and communicator) are kept once.
  static constexpr std::size_t kFreedKept = 64;
  // Under MPI_THREAD_MULTIPLE several threads may start requests at once and
  // claim slots with compare-and-swap; otherwise plain stores are enough.
  void set_concurrent_writers(bool concurrent) noexcept { concurrent_writers_ = concurrent; }
  bool concurrent_writers() const noexcept { return concurrent_writers_; }
  // A nonblocking start or a persistent init: active, except a persistent
  // request, which MPI_Start activates. `tallies`: its communicator's
  // message tallies, for a point-to-point operation's completion.
  void remember(MPI_Request request, const CallRecord& started, tallies::CommTallies* tallies) noexcept;
  bool find(MPI_Request request, CallRecord& out) const noexcept;
  // MPI_Start and MPI_Startall: the request's start record and its
  // communicator's tallies, for counting its send; false when the table
  // does not know it.
  bool activate(MPI_Request request, CallRecord& started, tallies::CommTallies*& tallies) noexcept;
  // MPI_Cancel, before the call: its completion says whether it was undone.
  void cancelling(MPI_Request request) noexcept;

  // What a completed request was, for the tallies of what it matched.
  struct Completed {
    bool receives = false;   // a receive, or a send-receive's receive half
    bool cancelling = false;  // MPI_Cancel was asked of it
    tallies::CommTallies* tallies = nullptr;
  };

  // A request's entry as a Wait or Test found it before the call: at
  // MPI_THREAD_MULTIPLE another thread may get the handle again the moment
  // MPI completes it, so a completion clears only the start it saw.
  // Trivial, so that a Wait's array of them costs no stores until filled.
  struct Seen {
    Slot* slot;
    std::uint64_t state;
  };
  Seen see(MPI_Request request) noexcept;
  // The call completed the request seen before it: a persistent one is
  // inactive, any other gone.
  Completed complete(const Seen& seen) noexcept;
  // A receive that MPI completed inside a wait that has not returned (a
  // Waitall whose other requests still wait): its message is matched now, so
  // counted now, and its completion counts nothing more. Returns what
  // complete() would have for a receive not yet counted so; nothing for any
  // other request, or one MPI_Cancel was asked of (its completion says).
  Completed matched_early(MPI_Request request) noexcept;
  // MPI_Request_free, before the call: an active request goes on, handleless.
  void release(MPI_Request request) noexcept;

  // The monitor: every active request's handle and start record (freed
  // ones too, with MPI_REQUEST_NULL).
  template <typename Visit>
  void for_each_active(Visit&& visit) const;
  // Some active request is not in the table (see above).
  bool lost_active() const noexcept { return lost_active_.load(std::memory_order_acquire); }

 private:
  static constexpr std::size_t kProbes = 16;
  static std::uint64_t key_of(MPI_Request request) noexcept;
  static MPI_Request handle_of(std::uint64_t key) noexcept;
  static std::size_t home_of(std::uint64_t key) noexcept;
  Slot* slot_of(MPI_Request request) noexcept;
  void mark_lost() noexcept { lost_active_.store(true, std::memory_order_release); }
  // Sets the slot's state, for the same filling of it only (the bits above kActive).
  void set_state(Slot& slot, std::uint64_t state) noexcept;
  // A slot's state: bit 0 set while its request is active; the bits above
  // count how often the slot was filled, so that Seen names one start.
  static constexpr std::uint64_t kActive = 1;
  static constexpr std::uint64_t kFilled = 2;
  // A slot's summary of its start, read at each completion: its
  // communicator's tallies, with kReceives, kCancelling and kMatchedEarly
  // (this start's message counted by matched_early) in the low bits.
  static constexpr std::uintptr_t kReceives = 1;
  static constexpr std::uintptr_t kCancelling = 2;
  static constexpr std::uintptr_t kMatchedEarly = 4;
  static constexpr std::uintptr_t kSummaryBits = kReceives | kCancelling | kMatchedEarly;
  static Completed completed_of(std::uintptr_t summary) noexcept;
  struct Slot {
    std::atomic<std::uint64_t> key{0};  // request handle + 1; 0 = empty
    std::atomic<std::uint64_t> state{0};
    std::atomic<std::uintptr_t> summary{0};
    SharedRecord record;
  };
  Slot slots_[kSlots];
  // Freed while active, in order; `freed_count_` published after each record.
  SharedRecord freed_[kFreedKept];
  std::atomic<std::size_t> freed_count_{0};
  std::atomic<bool> lost_active_{false};
  bool concurrent_writers_ = true;
};

template <typename Visit>
void RequestTable::for_each_active(Visit&& visit) const {
  CallRecord record;
  for (const Slot& slot : slots_) {
    const std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == 0 || !(slot.state.load(std::memory_order_acquire) & kActive)) continue;
    // A writer holds the record for nanoseconds: read it again.
    while (!slot.record.load(record)) std::this_thread::yield();
    if (slot.state.load(std::memory_order_acquire) & kActive) visit(handle_of(key), record);
  }
  const std::size_t freed = std::min(freed_count_.load(std::memory_order_acquire), kFreedKept);
  for (std::size_t i = 0; i < freed; ++i)
    if (freed_[i].load(record)) visit(MPI_REQUEST_NULL, record);
}

namespace detail {
extern constinit RequestTable request_table;
}  // namespace detail
inline RequestTable& requests() noexcept { return detail::request_table; }

// A point-to-point operation: a send, a receive or both (MPI_Sendrecv).
bool is_point_to_point(const CallRecord& op);
// A nonblocking collective's request, or a persistent collective's (whose
// record is its init's, with its last start): it completes only when its
// blocking twin could.
bool is_nonblocking_collective(const CallRecord& op);
// A persistent collective's request.
bool is_persistent_collective(const CallRecord& op);
// Whether MPI_Request_get_status may be asked about a request started as
// `started`: point-to-point operations and nonblocking collectives, the
// requests whose waits the monitor reads. Never a generalized request (MPI-IO's
// among them): asking would run the program's query function.
bool state_readable(const CallRecord& started);

enum class RequestState : std::uint8_t {
  Incomplete,  // its waiting thread found it incomplete after the monitor asked
  Complete,    // completed, or an inactive persistent request: MPI's waits ignore it
  Unknown,     // its thread did not answer, or its state is not readable (started unseen, a generalized request)
};

// One request of a Wait/Test call, as the monitor found it.
struct RequestView {
  MPI_Request handle = MPI_REQUEST_NULL;
  bool known = false;  // the request table knows how it started
  CallRecord started;
  RequestState state = RequestState::Unknown;
  int unreadied_partitions = 0;  // a partitioned send's, in its current start (records/partitioned_requests.hpp)
};

}  // namespace mpisentry
