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
// The wrappers reach it through the objects of checks/calls.hpp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include "api/functions.hpp"
#include "report/snapshot.hpp"
#include "trackers/checksums.hpp"
#include "trackers/requests.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool shadowing;     // a GLOBAL:MSG check is on; set at start, then read only
extern bool judging_races;  // GLOBAL:MSG:RACE is on, below MPI_THREAD_MULTIPLE; the same
}

inline bool shadowing() noexcept { return detail::shadowing; }
inline bool judging_races() noexcept { return detail::judging_races; }

// Whether sends checksum their buffers for it.
bool summing_sends() noexcept;
// checks/lifecycle.def (collective over MPI_COMM_WORLD): shadows of
// MPI_COMM_WORLD and MPI_COMM_SELF when a GLOBAL:MSG check is on, and the
// request tracker's events.
void start_messages(const StartContext& context);

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

// What a completed receive got (trackers/requests.hpp's Receive): pairs with
// its record and compares the receive's signature, cut to the received
// bytes, with the sender's.
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

// GLOBAL:MSG:RACE: a Waitany, Waitsome, Testany or Testsome at `call_site`
// returned some requests while receives among the others were active (each
// gets Receive::passed_over_at).
void passed_over(const void* call_site);

// GLOBAL:MSG:RACE: a probe from MPI_ANY_SOURCE with `tag` at `call_site`
// found the message that `status` describes.
void probe_found(MPI_Comm comm, int tag, const MPI_Status& status, const void* call_site);

}  // namespace mpisentry::checks
