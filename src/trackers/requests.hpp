// Every request the program holds, from its start to its completion or
// free, for LOCAL:REQUEST:NOT_FREED and LOCAL:REQUEST:PREMATURE_FREE
// (checks/requests, through RequestCheckEvents), for
// LOCAL:MEMORY:ILLEGAL_MODIFICATION (trackers/checksums.hpp) and for the
// message channel (trackers/message_channel.hpp), which hears of the
// requests' sends and receives through MessageEvents. Exact, unlike the deadlock monitor's table
// (records/call_record.hpp's RequestTable): kept only while one of these
// checks is on. Why two: the monitor's table is read by another thread, so
// it is lock-free and fixed in size, and may forget a request (the monitor
// then calls it unknown and claims nothing); these checks must name every
// leaked request, which takes memory that grows, and locks at
// MPI_THREAD_MULTIPLE (below it the program's MPI calls never overlap).
// A request keeps where it was started as its call site (one word): a whole
// stack would cost more than the call.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "records/call_record.hpp"
#include "records/scratch_buffer.hpp"
#include "trackers/checksums.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool tracking;  // a GLOBAL:MSG, LOCAL:REQUEST or LOCAL:MEMORY check is on; set at start, then read only
}

inline bool tracking() noexcept { return detail::tracking; }

// checks/lifecycle.def: after the message channel and the request checks,
// whose events it needs.
void start_requests(const StartContext& context);

// A request as the request checks see it.
struct RequestView {
  const CallRecord& record;  // as started (the fields its shape uses)
  bool receives;             // a receive or send-receive: it may still write its buffer
  bool active;
  bool persistent;
  bool partitioned;          // a partitioned send
  const void* call_site;     // where it was started
};

// What the request checks hear (checks/requests registers them when it
// starts, before the tracker does).
struct RequestCheckEvents {
  // MPI_Request_free frees an active request.
  void (*freed_while_active)(const RequestView& request) = nullptr;
  // In MPI_Finalize, in start order: each request never completed or freed.
  void (*left_at_finalize)(const RequestView& request) = nullptr;
  // A completion found the send buffer of the request's operation written
  // since it started (buffer_changed; not at MPI_THREAD_MULTIPLE, where
  // no checksums are taken).
  void (*send_buffer_written)(const RequestView& request) = nullptr;
};
void listen_for_request_checks(const RequestCheckEvents& events);

// A receive that completed, as the message analysis pairs it with its
// message's record: from a request, or from a blocking receive
// (checks/calls.hpp). `known_type` false: only paired (a receive whose type
// the wrapper does not have, or that may have been freed since the receive
// started).
struct Receive {
  FunctionId function = FunctionId::None;
  std::int64_t count = 0;
  MPI_Datatype type = MPI_DATATYPE_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  bool known_type = true;
  const void* posted_at = nullptr;     // a nonblocking receive's call site; nullptr for a blocking one
  const void* completed_at = nullptr;  // the call site of the call that completed it
  const void* buffer = nullptr;        // a nonblocking receive's buffer (not a matched receive's)
  // False when its record may be another message's: it completed before a
  // receive posted earlier that could take the same messages, which MPI
  // matched first (or after such a receive). Only paired.
  bool in_order = true;
  // What it asked for (comm ranks): kMatched for MPI_Mrecv and MPI_Imrecv,
  // whose probe chose the message.
  int source = kMatched;
  int tag = MPI_ANY_TAG;
  // GLOBAL:MSG:RACE: a receive started before it was still active on its
  // communicator when it completed (MPI may have to give that one another
  // sender's message first).
  bool after_active = false;
  // GLOBAL:MSG:RACE: when a Waitany, Waitsome, Testany or Testsome last
  // returned other requests while this receive was active (race_clock; 0:
  // none did), and its call site.
  std::int64_t passed_over_at = 0;
  const void* passed_over_by = nullptr;
  static constexpr int kMatched = -32767;
};

// What the message channel hears of the requests: it registers them when
// it starts, before the tracker does (checks/lifecycle.def). Without them
// the tracker makes no message records. Each is called outside the tracker's
// locks.
struct MessageEvents {
  // A nonblocking send started (at its start); `data`: its send buffer's
  // checksum when taken. Returns its record's number for send_cancelled (0:
  // none kept).
  std::uint64_t (*send_started)(FunctionId function, std::int64_t count, MPI_Datatype type, int dest, int tag,
                                MPI_Comm comm, const void* call_site, const BufferChecksum& data) = nullptr;
  void (*receive_completed)(const Receive& receive, const MPI_Status& status) = nullptr;
  // The send of record `number` was cancelled.
  void (*send_cancelled)(std::uint64_t number, MPI_Comm comm, int dest, int tag) = nullptr;
  // A receive freed while active on `comm`, from comm rank `source` or any,
  // with `tag` or any.
  void (*receive_abandoned)(MPI_Comm comm, int source, int tag) = nullptr;
  // A call completing receives failed: which of them took which message is
  // not known.
  void (*receive_failed)() = nullptr;
  // GLOBAL:MSG:RACE is judged: the tracker notes which receives a
  // completion call passed over and which were started after an active one.
  bool judging_races = false;
};
void listen_for_messages(const MessageEvents& events);

// For GLOBAL:MSG:RACE (checks/races), while MessageEvents::judging_races: a
// Waitany, Waitsome, Testany or Testsome at `call_site` returned some
// requests while receives among the others were active (each of those gets
// Receive::passed_over_at).
void listen_for_passed_over(void (*passed_over)(const void* call_site));

// A nonblocking or persistent start succeeded: `started` is its record.
// Nonblocking sends hand their message's record to the message channel here.
void started(MPI_Request request, const CallRecord& started, const void* call_site);
// MPI_Imrecv, whose record lacks the communicator (the probe's).
void started_matched(MPI_Request request, FunctionId function, std::int64_t count, MPI_Datatype type, MPI_Comm comm,
                     const void* call_site);
// MPI_Start and MPI_Startall, after they succeeded.
void restarted(int count, const MPI_Request* requests, const void* call_site);
// Before the MPI_Pready* that readies the last partition of a partitioned
// send in its start: its buffer is MPI's from now, and its checksum
// (LOCAL:MEMORY:ILLEGAL_MODIFICATION) taken now rather than at MPI_Start. A
// partition readied earlier and written before the last is not seen.
void partitioned_send_readied(MPI_Request request);
// Before MPI_Request_free.
void freeing(MPI_Request request);

// What a call that found requests complete did with their handles: MPI_Wait
// and MPI_Test free a nonblocking request and deactivate a persistent one;
// MPI_Request_get_status does neither (MPI 4.0, 3.7.3), so the request is
// still to be freed, by a Wait, a Test or MPI_Request_free, which is then
// no premature free.
enum class Handle { Released, Kept };

// The entries of a Wait or Test call's requests, taken out of the table
// before the call at MPI_THREAD_MULTIPLE: MPI frees a completed request's
// handle inside the call, and another thread's start may get the same handle
// and enter it before this thread's wrapper looks the handle up. Below that
// level nothing is held.
class HeldRequests {
 public:
  void hold(const MPI_Request* requests, int count);
  struct Held;
  Held* held() const { return held_; }  // null: none held
  int count() const { return count_; }

 private:
  ScratchBuffer buffer_;
  Held* held_ = nullptr;
  int count_ = 0;
};

// The requests of a call that completed: the k-th is requests[indices[k]]
// (requests[k] without indices) and its status statuses[k]. Receives among
// them are taken in the order they were started. A send whose status says
// it was cancelled no longer counts as sent. An operation completes once: a
// request kept and then completed again is only released. Entries held and
// not completed go back to the table.
void completed(const MPI_Request* requests, const int* indices, int count, const MPI_Status* statuses, Handle handle,
               const void* call_site, const HeldRequests& held);

// A blocking receive on `comm` got a message from (source, tag): false when
// a nonblocking receive posted before it and still pending could take such
// messages (MPI matched that one first, so the shadows pair the other way
// round); that receive's shadow is then not compared either.
bool receive_in_order(MPI_Comm comm, int source, int tag);

// Below MPI_THREAD_MULTIPLE: whether a receive started before `before`
// (UINT64_MAX: any) is still active on `comm`.
bool receive_active_before(MPI_Comm comm, std::uint64_t before);

// A Wait/Test call on `requests` returned an error: which of them
// completed, and how, is not known; they are no longer tracked (not
// reported as not freed) and GLOBAL:MSG:PENDING stops (MessageEvents::receive_failed).
void failed(const MPI_Request* requests, int count, const HeldRequests& held);

// In MPI_Finalize: every request never completed or freed, to the request
// checks.
void finish_requests();

// Wait and Test (flag: nullptr for Wait), and MPI_Request_get_status, which
// keeps the request.
class CompleteOne {
 public:
  CompleteOne(const MPI_Request* request, MPI_Status*& status, const int* flag, Handle handle,
              const void* call_site)
      : on_(tracking()), flag_(flag), handle_(handle), call_site_(call_site) {
    if (!on_) return;
    request_ = request ? *request : MPI_REQUEST_NULL;
    if (status == MPI_STATUS_IGNORE) status = &own_;
    status_ = status;
    held_.hold(&request_, 1);
  }
  int done(int result) const {
    // Held entries go back even when nothing completed.
    const int count = flag_ == nullptr || *flag_ ? 1 : 0;
    if (on_ && result == MPI_SUCCESS && (count > 0 || held_.held()))
      completed(&request_, nullptr, count, status_, handle_, call_site_, held_);
    if (on_ && result != MPI_SUCCESS) failed(&request_, 1, held_);
    return result;
  }

 private:
  bool on_;
  const int* flag_;
  Handle handle_;
  const void* call_site_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  MPI_Status* status_ = nullptr;
  MPI_Status own_;
  HeldRequests held_;
};

// Waitall and Testall, Waitany and Testany, Waitsome and Testsome: the
// handles are copied before the call, which may set them to
// MPI_REQUEST_NULL.
class CompleteMany {
 public:
  enum class Mode { All, Any, Some };
  // All: `flag` (nullptr for Waitall). Any: `index` and `flag`. Some:
  // `outcount` and `indices`.
  CompleteMany(Mode mode, int count, const MPI_Request* requests, MPI_Status*& statuses, const int* flag,
               const int* index_or_outcount, const int* indices, const void* call_site)
      : on_(tracking()), mode_(mode), flag_(flag), index_(index_or_outcount), indices_(indices),
        call_site_(call_site) {
    if (!on_) return;
    count_ = requests && count > 0 ? count : 0;
    handles_ = handles_buffer_.get<MPI_Request>(static_cast<std::size_t>(count_) + 1);
    std::copy_n(requests, count_, handles_);
    if (statuses == MPI_STATUSES_IGNORE)
      statuses = statuses_buffer_.get<MPI_Status>(mode == Mode::Any ? 1 : static_cast<std::size_t>(count_) + 1);
    statuses_ = statuses;
    held_.hold(handles_, count_);
  }
  CompleteMany(const CompleteMany&) = delete;
  CompleteMany& operator=(const CompleteMany&) = delete;
  int done(int result) const {
    // Held entries go back even when nothing completed.
    if (on_ && result == MPI_SUCCESS && (flag_ == nullptr || *flag_ || held_.held())) finish();
    if (on_ && result != MPI_SUCCESS) failed(handles_, count_, held_);
    return result;
  }

 private:
  void finish() const;
  bool on_;
  Mode mode_;
  const int* flag_;
  const int* index_;
  const int* indices_;
  const void* call_site_;
  ScratchBuffer handles_buffer_, statuses_buffer_;
  int count_ = 0;
  MPI_Request* handles_ = nullptr;
  MPI_Status* statuses_ = nullptr;
  HeldRequests held_;
};

}  // namespace mpisentry::checks
