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

// Which halves of a send-receive (CallShape::SendReceive) may still be
// incomplete.
enum class Halves : std::uint8_t {
  Either,          // one of them, which is not known (MPI_Sendrecv_replace, an MPI_Isendrecv request)
  ReceivePending,  // the receive is not done; the send may be (MPI_Sendrecv, done as its halves)
  SendPending,     // the receive is done, the send is not
};

struct CallRecord {
  // Point-to-point calls and starts store only up to comm_id; a Sendrecv
  // also source and recv_tag; collectives, Wait/Test and the rest up to op,
  // then what their shape has in the union below (used_bytes).
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
  // store none of it (used_bytes). Wrappers set every field their shape uses.
  union {
    MPI_Request requests[kCopiedRequests];  // Requests: min(request_count, kCopiedRequests) of them
    FileFields file;                        // FileCollective, FileAccess
    WindowFields window;                    // Window
  };

  // How many leading bytes hold this call's fields: the rest is not written
  // by SharedRecord::store, so a call costs only what its shape needs.
  std::size_t used_bytes() const noexcept;
};
static_assert(std::is_trivially_copyable_v<CallRecord>);

// Always inlined: every wrapper's store and copy asks it, and a wrapper's
// constant shape folds it to a constant (GCC left the plain inline one out
// of line: a call and a jump table on every MPI call).
[[gnu::always_inline]] inline std::size_t CallRecord::used_bytes() const noexcept {
  constexpr std::size_t common = offsetof(CallRecord, requests);
  switch (shape) {
    case CallShape::None:
    case CallShape::Send:
    case CallShape::Receive:
    case CallShape::Probe:
    case CallShape::MatchedReceive:
    case CallShape::Opaque:
    case CallShape::Finalize: return offsetof(CallRecord, source);
    case CallShape::SendReceive: return offsetof(CallRecord, request_count);
    case CallShape::Requests:
      return common + static_cast<std::size_t>(std::clamp(request_count, 0, kCopiedRequests)) * sizeof(MPI_Request);
    case CallShape::FileCollective:
    case CallShape::FileAccess: return common + sizeof(FileFields);
    case CallShape::Window:
      return common + offsetof(WindowFields, group) +
             static_cast<std::size_t>(std::clamp(window.group_size, 0, kCopiedRequests)) * sizeof(int);
    case CallShape::Collective:
    case CallShape::Rooted:
    case CallShape::Neighborhood:
    case CallShape::Connection: return common;
  }
  return common;
}


// Copies the fields `from` uses (used_bytes) into `to`: the common part at a
// fixed size, which the compiler turns into a few moves (a copy of a size
// known only at run time became a rep movs, dearer than the call).
inline void copy_used(CallRecord& to, const CallRecord& from) noexcept {
  constexpr std::size_t common = offsetof(CallRecord, requests);
  std::memcpy(static_cast<void*>(&to), &from, common);
  const std::size_t used = from.used_bytes();
  if (used > common)
    std::memcpy(reinterpret_cast<char*>(&to) + common, reinterpret_cast<const char*>(&from) + common, used - common);
}

// A CallRecord that one thread writes and another reads without tearing
// (a seqlock over atomic words, stored with release and loaded with acquire:
// readers retry, writers never wait).
// Only the leading used_bytes() are written; a reader must look only at the
// fields the record's shape uses.
class SharedRecord {
 public:
  // Inline, so that a wrapper's constant shape folds the size to a constant
  // and the loop to a few stores.
  [[gnu::always_inline]] void store(const CallRecord& record) noexcept {
    static_assert(sizeof(CallRecord) % 8 == 0);
    const std::size_t used_words = (record.used_bytes() + 7) / 8;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&record);
    const std::uint64_t seq = sequence_.load(std::memory_order_relaxed);
    sequence_.store(seq + 1, std::memory_order_relaxed);
    // Release stores rather than relaxed ones after a release fence: a reader
    // that sees a new word then sees the odd sequence before it. The same
    // plain stores on x86, and ThreadSanitizer, which ignores fences, sees the
    // ordering. Word by word from the record: a copy into a buffer first
    // (rep movs) cost more than the stores.
    for (std::size_t i = 0; i < used_words; ++i) {
      std::uint64_t word;
      std::memcpy(&word, bytes + i * 8, 8);
      words_[i].store(word, std::memory_order_release);
    }
    sequence_.store(seq + 2, std::memory_order_release);
  }
  // False when a write overlapped the read; the caller retries later.
  bool load(CallRecord& out) const noexcept;

 private:
  static constexpr std::size_t kWords = (sizeof(CallRecord) + 7) / 8;
  std::atomic<std::uint64_t> sequence_{0};  // odd while a write is under way
  std::atomic<std::uint64_t> words_[kWords]{};
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
// (checks/requests.hpp), only while they are on.
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
  struct Seen {
    Slot* slot = nullptr;
    std::uint64_t state = 0;
  };
  Seen see(MPI_Request request) noexcept;
  // The call completed the request: a persistent one is inactive, any other gone.
  Completed complete(MPI_Request request) noexcept;
  Completed complete(const Seen& seen) noexcept;
  // A receive that MPI completed inside a wait that has not returned (a
  // Waitall whose other requests still wait): its message is matched now, so
  // counted now, and its completion counts nothing more. Returns what
  // complete() would have for a receive not yet counted so; nothing for any
  // other request, or one MPI_Cancel was asked of (its completion says).
  Completed matched_early(MPI_Request request) noexcept;
  // MPI_Request_free, before the call: an active request goes on, handleless.
  void release(MPI_Request request) noexcept;

  // The monitor: every active request's start record (freed ones too).
  template <typename Visit>
  void for_each_active(Visit&& visit) const;
  // Some active request is not in the table (see above).
  bool lost_active() const noexcept { return lost_active_.load(std::memory_order_acquire); }

 private:
  static constexpr std::size_t kProbes = 16;
  static std::uint64_t key_of(MPI_Request request) noexcept;
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
    if (slot.key.load(std::memory_order_acquire) == 0 || !(slot.state.load(std::memory_order_acquire) & kActive))
      continue;
    // A writer holds the record for nanoseconds: read it again.
    while (!slot.record.load(record)) std::this_thread::yield();
    if (slot.state.load(std::memory_order_acquire) & kActive) visit(record);
  }
  const std::size_t freed = std::min(freed_count_.load(std::memory_order_acquire), kFreedKept);
  for (std::size_t i = 0; i < freed; ++i)
    if (freed_[i].load(record)) visit(record);
}

namespace detail {
extern constinit RequestTable request_table;
}  // namespace detail
inline RequestTable& requests() noexcept { return detail::request_table; }

// A point-to-point operation: a send, a receive or both (MPI_Sendrecv).
bool is_point_to_point(const CallRecord& op);
// A nonblocking collective's request (not a persistent one, whose record is
// its init's): it completes only when its blocking twin could.
bool is_nonblocking_collective(const CallRecord& op);
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
};

}  // namespace mpisentry
