// The per-message channel, for the message analyses (checks/message_types,
// checks/receive_buffers, checks/pending, checks/races). Each sender keeps
// one record per message (its type signature, call and call site) in an
// outbox per communicator and destination, and
// sends the outbox as one batch on a shadow communicator (a duplicate of the
// program's, made with it) when it holds kBatch records, when the monitor's
// tick has passed (records wait at most about two DEADLOCK-CHECK-INTERVALs),
// and when the communicator is freed or MPI finalized. MPI keeps messages
// from one source with one tag on one communicator in order, so the n-th
// message a receiver takes from (source, tag) pairs with the n-th record
// from there: the analyses hear of the pair at once when the record is
// there, else when its batch arrives (MessageListener::paired). What was
// sent and never received is the records left over when a communicator is
// freed or MPI is finalized (MessageListener::unreceived). For
// GLOBAL:MSG:RACE each record also carries when it was sent, and each
// receive when it returned.
//
// Below MPI_THREAD_MULTIPLE the program's MPI calls never overlap, and the
// channel takes no lock; at MULTIPLE one lock guards it (the listeners' hooks
// run under it), and records carry kMultipleThreads (two threads' messages
// of one source and tag may pair with each other's records).
//
// The wrappers reach it through the objects of checks/calls.hpp.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <vector>

#include <string>

#include "api/functions.hpp"
#include "report/report.hpp"
#include "model/snapshot.hpp"
#include "trackers/checksums.hpp"
#include "trackers/requests.hpp"
#include "trackers/signature.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool shadowing;     // a GLOBAL:MSG check is on; set at start, then read only
extern bool judging_races;  // GLOBAL:MSG:RACE is on, below MPI_THREAD_MULTIPLE: messages carry times; the same
}

inline bool shadowing() noexcept { return detail::shadowing; }
inline bool judging_races() noexcept { return detail::judging_races; }

// One sent message as its receiver gets it. Trivially copyable and the same
// on every rank (MPI_Init's handshake makes sure every rank runs this build).
struct MessageRecord {
  std::uint64_t number = 0;  // this sender's count of records, from 1
  std::int64_t count = 0;
  std::int64_t bytes = 0;
  std::uint64_t hash = 0;
  std::uint64_t call_site = 0;  // offset in the sender's executable + 1; 0: elsewhere
  std::int64_t sent_at = 0;     // GLOBAL:MSG:RACE: race_clock() once the send call started it; 0 without it
  std::uint64_t data_sum = 0;   // the send buffer's checksum, with kSummed (summing_sends)
  std::int32_t tag = 0;
  std::uint32_t type_text = 0;  // offset of the sender's datatype text in its batch
  std::uint16_t function = 0;   // FunctionId
  std::uint8_t flags = 0;
  // flags:
  static constexpr std::uint8_t kUntyped = 1, kKnown = 2, kMultipleThreads = 4, kCancel = 8, kSynchronous = 16,
                                kSummed = 32;
  // The sender's type signature (bytes, hash, untyped, known).
  Signature signature() const;
};

// A receive that completed, as the channel keeps it until its record
// arrives: what the analyses read when it pairs.
struct TakenReceive {
  bool compare = false;  // the datatype check compares it (in order, type known, single thread)
  bool summed = false;   // its buffer's checksum is in data_sum (summing_sends; as in order)
  std::uint64_t data_sum = 0;
  const void* buffer = nullptr;
  FunctionId function = FunctionId::None;
  std::int64_t count = 0;
  std::int64_t received_bytes = 0;
  TypeRef type;
  const void* posted_at = nullptr;
  const void* completed_at = nullptr;
  std::uint64_t order = 0;  // GLOBAL:MSG:RACE: the rank's count of receives when it completed
  std::int64_t passed_over_at = 0;  // Receive::passed_over_at
  const void* passed_over_by = nullptr;
};

// A program's communicator as the channel shadows it, for the listeners.
struct ShadowView {
  std::uint64_t id;                // never given to another communicator
  const std::vector<int>& peers;   // world rank of each comm rank (the remote group's for inter)
  const std::string& name;         // the program's communicator, for reports
  int rank;                        // this rank in it
  // The records pair with the messages the receives took: not once a
  // receive was freed while active or failed (it may have taken a message
  // whose record the next receive then gets).
  bool pairing_holds;
};

// What an analysis hears of the channel (listen_to_channel, from its start).
// Hooks marked "under the lock" run under the channel's lock at
// MPI_THREAD_MULTIPLE and may not report: they keep what they found for
// `after_lock`, which the channel calls once it released the lock.
struct MessageListener {
  // Under the lock: a receive completed on `shadow`, before its record
  // pairs. `returned_at`: when it returned (race_clock), for receives from
  // MPI_ANY_SOURCE while races are judged, else 0; `after_active`: a
  // receive started before it was still active.
  void (*receive_completed)(const ShadowView& shadow, const Receive& receive, const MPI_Status& status,
                            const TakenReceive& taken, std::int64_t returned_at, bool after_active) = nullptr;
  // Under the lock: a probe from MPI_ANY_SOURCE with `tag` at `call_site`
  // found the message `status` describes, after `receives` receives of the
  // rank, at `at`.
  void (*probe_found)(const ShadowView& shadow, int tag, const MPI_Status& status, const void* call_site,
                      std::uint64_t receives, std::int64_t at, bool after_active) = nullptr;
  // Under the lock: the record of the message that `taken` received from
  // comm rank `source`; `sent_type`: the sender's datatype text.
  void (*paired)(const ShadowView& shadow, int source, const MessageRecord& record, const std::string& sent_type,
                 const TakenReceive& taken) = nullptr;
  // Where no other thread calls MPI (the communicator's free, MPI_Finalize):
  // a record that no receive took. `maybe_taken`: a receive freed while
  // active may have taken its message.
  void (*unreceived)(const ShadowView& shadow, int source, const MessageRecord& record, const std::string& sent_type,
                     bool maybe_taken) = nullptr;
  // After the unreceived records of `where` (a communicator's name, or "its
  // communicators"), before `when` ("MPI_Comm_free", "MPI_Finalize"):
  // `missing` records were sent there and did not arrive within kDrainLimit.
  void (*drained)(std::int64_t missing, const std::string& where, const char* when) = nullptr;
  // A freed communicator's shadow is gone: its id is never used again.
  void (*shadow_gone)(std::uint64_t id) = nullptr;
  void (*after_lock)() = nullptr;
};
// At most kMaxListeners, each heard in the order they listen.
inline constexpr int kMaxListeners = 4;
void listen_to_channel(const MessageListener& listener);

// Whether sends checksum their buffers (for checks/receive_buffers).
bool summing_sends() noexcept;
// checks/lifecycle.def (collective over MPI_COMM_WORLD): shadows of
// MPI_COMM_WORLD and MPI_COMM_SELF when a GLOBAL:MSG check is on, and the
// request tracker's events.
void start_channel(const StartContext& context);

// The shadow of MPI_COMM_WORLD (MPI_COMM_NULL while shadowing() is false),
// for an analysis's own exchanges at its start.
MPI_Comm shadow_of_world();

// Whether a receive failed (lost_count_of_messages): the records no longer
// tell which messages are pending.
bool count_of_messages_lost() noexcept;

// Under the lock: whether a message that MPI_Mprobe or MPI_Improbe matched
// still waits for its MPI_Mrecv or MPI_Imrecv.
bool messages_probed_not_received();

// Whether a record and its receive may be compared byte for byte: the
// program runs below MPI_THREAD_MULTIPLE (else the record may be another
// thread's message) and the receive got all that was sent (a truncation is
// MPI's own error).
bool comparable(const MessageRecord& sent, const TakenReceive& taken);

// A pair that a listener keeps under the lock, to report after it.
struct KeptPair {
  TakenReceive taken;
  MessageRecord sent;
  std::string sent_type;
  int sender = 0;  // world rank
  int source = 0;  // comm rank
  std::string comm;
};

// A listener's kept pairs: kept in `paired`, reported in `after_lock`. Only
// pairs that are comparable() are kept, never at MPI_THREAD_MULTIPLE, so it
// takes no lock of its own.
class KeptPairs {
 public:
  void keep(const ShadowView& shadow, int source, const MessageRecord& sent, const std::string& sent_type,
            const TakenReceive& taken);
  // Each pair kept since the last call, in the order kept, then none.
  template <typename Report>
  void report_each(Report&& report) {
    if (pairs_.empty()) return;
    std::vector<KeptPair> pairs;
    pairs.swap(pairs_);
    for (const KeptPair& pair : pairs) report(pair);
  }

 private:
  std::vector<KeptPair> pairs_;
};

// For reports: a record's send call as text, and the sender's call site
// symbolized in this process (the same executable).
std::string sent_call_text(const MessageRecord& record, const std::string& type, int dest_rank,
                           const std::string& comm);
std::vector<Frame> sender_stack(const MessageRecord& record);
// The receive's parties of a report: where it completed and where it was
// posted, or where a blocking receive took it.
void add_receive_parties(report::Finding& finding, const TakenReceive& taken, const std::string& receive_call);

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
void finish_channel();

// A message that `function` sent from `call_site` (at its start, for a
// nonblocking send); `data`: its send buffer's checksum, when
// summing_sends() took it (by reference: an optional by value is built
// narrow on the stack and read back wide, which waits). Returns the
// record's number for cancelled_send (0: none was kept).
std::uint64_t sent(FunctionId function, std::int64_t count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                   const void* call_site, const BufferChecksum& data);

// What a completed receive got (trackers/requests.hpp's Receive): pairs with
// its record.
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

// GLOBAL:MSG:RACE: a probe from MPI_ANY_SOURCE with `tag` at `call_site`
// found the message that `status` describes.
void probe_found(MPI_Comm comm, int tag, const MPI_Status& status, const void* call_site);

}  // namespace mpisentry::checks
