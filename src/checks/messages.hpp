// GLOBAL:MSG:DATATYPE:MISMATCH, GLOBAL:MSG:PENDING and GLOBAL:MSG:RACE: the
// per-message channel. Each sender keeps one record per message (its type signature,
// call and call site) in an outbox per communicator and destination, and
// sends the outbox as one batch on a shadow communicator (a duplicate of the
// program's, made with it) when it holds kBatch records, when the monitor's
// tick has passed (records wait at most about two DEADLOCK-CHECK-INTERVALs),
// and when the communicator is freed or MPI finalized. MPI keeps messages
// from one source with one tag on one communicator in order, so the n-th
// message a receiver takes from (source, tag) pairs with the n-th record
// from there: a receive compares at once when the record is there, else
// when its batch arrives. What was sent and never received is the records
// left over when a communicator is freed or MPI is finalized. For
// GLOBAL:MSG:RACE each record also carries when it was sent, which the
// receiver compares with when its receives and probes from MPI_ANY_SOURCE
// returned (the rules are in messages.cpp).
//
// Below MPI_THREAD_MULTIPLE the program's MPI calls never overlap, and the
// channel takes no lock; at MULTIPLE one lock guards it, and types are not
// compared (two threads' messages of one source and tag may pair with each
// other's records).
//
// The wrappers hold check objects around the forwarded call:
//   (SendCheck(...)).done(PMPI_Send(...))
// C++17 evaluates the object before the call's arguments, so a constructor
// may swap MPI_STATUS_IGNORE for a status of its own before MPI sees it,
// and done() sees the call's result. With the checks off they only test a
// flag or two (the blocking ones also compare their buffer for
// LOCAL:MEMORY:OVERLAP, checks/overlaps.hpp).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "api/functions.hpp"
#include "checks/buffers.hpp"
#include "checks/overlaps.hpp"
#include "report/snapshot.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool shadowing;     // a GLOBAL:MSG check is on; set at start, then read only
extern bool judging_races;  // GLOBAL:MSG:RACE is on, below MPI_THREAD_MULTIPLE; the same
}

inline bool shadowing() noexcept { return detail::shadowing; }
inline bool judging_races() noexcept { return detail::judging_races; }

// The program's return address of the wrapper it called.
#define MPISENTRY_CALL_SITE __builtin_return_address(0)

// The frames of a call site of this process (any module), innermost first.
std::vector<Frame> call_site_stack(const void* call_site);

// From checks::start (collective over MPI_COMM_WORLD): shadows of
// MPI_COMM_WORLD and MPI_COMM_SELF when a GLOBAL:MSG check is on.
// `multiple_threads`: the program runs at MPI_THREAD_MULTIPLE.
struct MessageChecks {
  bool datatype = false;  // GLOBAL:MSG:DATATYPE:MISMATCH
  bool pending = false;   // GLOBAL:MSG:PENDING
  bool race = false;      // GLOBAL:MSG:RACE
  int max_pending = 20;   // CHECK-MAX-PENDING
  // LOCAL:MEMORY:ILLEGAL_MODIFICATION of receive buffers: a record carries
  // its send buffer's checksum, which a nonblocking receive compares with
  // the bytes it holds when completed. Needs the channel (another check
  // above on); not at MPI_THREAD_MULTIPLE, where records may pair with
  // another thread's receive.
  bool receive_buffers = false;
};
// Whether sends checksum their buffers for it.
bool summing_sends() noexcept;
void start_messages(const MessageChecks& checks, bool multiple_threads);

// After a call made `created` (MPI_COMM_NULL on ranks not in it), on every
// member: its shadow (collective over it).
void communicator_created(MPI_Comm created);
inline void shadow_created(MPI_Comm created) {
  if (shadowing()) communicator_created(created);
}

// After MPI_Comm_idup or MPI_Comm_idup_with_info started `created` from
// `parent` (MPICH sets the handle in the call), on every member: its shadow,
// a nonblocking duplicate of `parent`, which has the same groups. `created`
// may not be used before the program's request completes, nor the shadow
// before its own: it is waited for when first used.
void communicator_dup_started(MPI_Comm parent, MPI_Comm created);
inline void shadow_dup_started(MPI_Comm parent, MPI_Comm created) {
  if (shadowing()) communicator_dup_started(parent, created);
}

// Before MPI_Comm_free or MPI_Comm_disconnect frees `comm` (collective over
// it): the records of its messages reach their receivers, which compare
// them and report the messages never received; its shadow is freed.
void communicator_freeing(MPI_Comm comm);

// In MPI_Finalize, on every rank: the same for every communicator left.
void finish_messages();

// A message that `function` sent from `call_site` (at its start, for a
// nonblocking send); `data`: its send buffer's checksum, when
// summing_sends() took it (by reference: an optional by value is built
// narrow on the stack and read back wide, which waits). Returns the
// record's number for cancelled_send (0: none was kept).
std::uint64_t sent(FunctionId function, std::int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   const void* call_site, const BufferChecksum& data);

// What a completed receive got: pairs with its record and compares the
// receive's signature, cut to the received bytes, with the sender's.
// `known_type` false: only paired (a receive whose type the wrapper does
// not have, or that may have been freed since the receive started).
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
void received(const Receive& receive, const MPI_Status& status);

// A receive failed in a way that consumed its message or not (an error in
// its status): the records no longer tell what is pending, so
// GLOBAL:MSG:PENDING says nothing more.
void lost_count_of_messages();

// The send of record `number` to comm rank `dest` of `comm` with `tag` was
// cancelled: the message no longer counts as sent.
void cancelled_send(std::uint64_t number, MPI_Comm comm, int dest, int tag);

// A receive freed while active on `comm` (from comm rank `source`, or any,
// with `tag`, or any): the message it takes has a record nobody pairs,
// which is not reported as pending.
void receive_abandoned(MPI_Comm comm, int source, int tag);

// MPI_Mprobe and MPI_Improbe: a message handle's communicator, for the
// MPI_Mrecv or MPI_Imrecv that takes it.
void probed(MPI_Message message, MPI_Comm comm);
MPI_Comm take_probed(MPI_Message message);

// GLOBAL:MSG:RACE's clock (CLOCK_MONOTONIC, in ns).
std::int64_t race_clock();

// GLOBAL:MSG:RACE: a Waitany, Waitsome, Testany or Testsome at `call_site`
// returned some requests while receives among the others were active (each
// gets Receive::passed_over_at).
void passed_over(const void* call_site);

// GLOBAL:MSG:RACE: a probe from MPI_ANY_SOURCE with `tag` at `call_site`
// found the message that `status` describes.
void probe_found(MPI_Comm comm, int tag, const MPI_Status& status, const void* call_site);

// A blocking send: its record once it succeeded. The buffer's checksum
// for the record is taken before the call: MPI_Sendrecv_replace receives
// into it.
class SendCheck {
 public:
  SendCheck(FunctionId function, const void* buffer, std::int64_t count, MPI_Datatype type, int dest, int tag,
            MPI_Comm comm, const void* call_site)
      : on_(shadowing()), function_(function), count_(count), type_(type), dest_(dest), tag_(tag), comm_(comm),
        call_site_(call_site) {
    if (watching_overlaps() && dest != MPI_PROC_NULL) buffer_used(buffer, count, type, BufferUse::Read, function);
    if (on_ && summing_sends() && dest != MPI_PROC_NULL) sum_into({buffer, count, type}, data_);
  }
  int done(int result) const {
    if (on_ && result == MPI_SUCCESS) sent(function_, count_, type_, dest_, tag_, comm_, call_site_, data_);
    return result;
  }

 private:
  bool on_;
  BufferChecksum data_;  // the send buffer's checksum, for the record (summing_sends)
  FunctionId function_;
  std::int64_t count_;
  MPI_Datatype type_;
  int dest_, tag_;
  MPI_Comm comm_;
  const void* call_site_;
};

// A blocking receive (MPI_Recv, MPI_Mrecv): *status is swapped for one of
// its own when the program ignores it.
class ReceiveCheck {
 public:
  ReceiveCheck(FunctionId function, void* buffer, std::int64_t count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status*& status, const void* call_site)
      : ReceiveCheck(WithoutBuffer{}, function, count, type, source, tag, comm, status, call_site) {
    if (watching_overlaps() && source != MPI_PROC_NULL) buffer_used(buffer, count, type, BufferUse::Write, function);
  }
  // MPI_Mrecv: the communicator is the probe's.
  ReceiveCheck(FunctionId function, void* buffer, std::int64_t count, MPI_Datatype type, const MPI_Message* message,
               MPI_Status*& status, const void* call_site)
      : ReceiveCheck(WithoutBuffer{}, function, count, type, Receive::kMatched, MPI_ANY_TAG, MPI_COMM_NULL, status,
                     call_site) {
    if (on_ && message) receive_.comm = take_probed(*message);
    if (watching_overlaps() && message && *message != MPI_MESSAGE_NO_PROC)
      buffer_used(buffer, count, type, BufferUse::Write, function);
  }
  int done(int result) const {
    if (!on_) return result;
    if (result == MPI_SUCCESS) {
      received(receive_, *status_);
    } else {
      // A truncated message is consumed (and its status is set): its record
      // too. Other errors leave the status unset.
      int error_class = MPI_SUCCESS;
      PMPI_Error_class(result, &error_class);
      if (error_class == MPI_ERR_TRUNCATE) {
        Receive consumed = receive_;
        consumed.in_order = false;
        received(consumed, *status_);
      }
    }
    return result;
  }

 private:
  // Without the buffer: the message checks' part of both constructors.
  struct WithoutBuffer {};
  ReceiveCheck(WithoutBuffer, FunctionId function, std::int64_t count, MPI_Datatype type, int source, int tag,
               MPI_Comm comm, MPI_Status*& status, const void* call_site)
      : on_(shadowing()), receive_{function, count, type, comm, true, nullptr, call_site} {
    if (!on_) return;
    if (status == MPI_STATUS_IGNORE) status = &own_;
    status_ = status;
    receive_.source = source;
    receive_.tag = tag;
  }

  bool on_;
  Receive receive_;
  MPI_Status* status_ = nullptr;
  MPI_Status own_;
};

// MPI_Sendrecv and MPI_Sendrecv_replace.
class SendReceiveCheck {
 public:
  SendReceiveCheck(FunctionId function, const void* send_buffer, std::int64_t send_count, MPI_Datatype send_type,
                   int dest, int send_tag, void* receive_buffer, std::int64_t receive_count,
                   MPI_Datatype receive_type, int source, int receive_tag, MPI_Comm comm, MPI_Status*& status,
                   const void* call_site)
      : send_(function, send_buffer, send_count, send_type, dest, send_tag, comm, call_site),
        receive_(function, receive_buffer, receive_count, receive_type, source, receive_tag, comm, status,
                 call_site) {}
  int done(int result) const { return receive_.done(send_.done(result)); }

 private:
  SendCheck send_;
  ReceiveCheck receive_;
};

// MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe (message: nullptr for
// the first two; flag: nullptr for the blocking ones): a matched probe's
// communicator, and for GLOBAL:MSG:RACE which message a probe from
// MPI_ANY_SOURCE found. A probe whose status the program ignores is not
// judged (it cannot act on the sender). The arguments come with the
// result, read after the call.
class ProbeCheck {
 public:
  ProbeCheck() : on_(shadowing()) {}
  int done(int result, int source, int tag, MPI_Comm comm, const MPI_Message* message, const int* flag,
           const MPI_Status* status, const void* call_site) const {
    if (!on_ || result != MPI_SUCCESS || (flag && !*flag)) return result;
    // Judged before its message counts as probed and not yet received.
    if (judging_races() && source == MPI_ANY_SOURCE && status != MPI_STATUS_IGNORE)
      probe_found(comm, tag, *status, call_site);
    if (message) probed(*message, comm);
    return result;
  }

 private:
  bool on_;
};

}  // namespace mpisentry::checks
