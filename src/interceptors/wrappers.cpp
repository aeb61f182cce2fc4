// The MPI API as the program sees it: every function of src/api/mpi_api.json
// records the call in the calling thread's ThreadState and forwards to PMPI.
// MPICH's mpif.h and `use mpi` bindings call these C functions.
#include <mpi.h>

#include <algorithm>

#include "checks/arguments/arguments.hpp"
#include "checks/calls.hpp"
#include "checks/collectives/collectives.hpp"
#include "checks/failed_calls/failed_calls.hpp"
#include "checks/handles/handles.hpp"
#include "checks/partitions/partitions.hpp"
#include "checks/rma/rma.hpp"
#include "comm_log/comm_log.hpp"
#include "config/slow_paths.hpp"
#include "records/call_record.hpp"
#include "records/communicators.hpp"
#include "records/persistent_collectives.hpp"
#include "records/partitioned_requests.hpp"
#include "interceptors/delay_injection.hpp"
#include "interceptors/interceptors.hpp"
#include "interceptors/outcomes.hpp"
#include "interceptors/patient_wait.hpp"
#include "interceptors/protocol.hpp"
#include "interceptors/tallied.hpp"
#include "interceptors/tested_wait.hpp"
#include "records/thread_state.hpp"
#include "records/windows.hpp"
#include "races/races.hpp"
#include "findings/findings.hpp"
#include "trackers/checksums.hpp"
#include "trackers/message_channel.hpp"
#include "trackers/requests.hpp"
#include "trackers/signature.hpp"

#define MPISENTRY_API extern "C" __attribute__((visibility("default")))

namespace mpisentry {
namespace {

using interceptors::out_of_line;
using interceptors::ScopedCall;
using interceptors::SlowOnly;

// Set once by start(), in MPI_Init, before the program's first wrapped call.
interceptors::Mode mode;

// POTENTIAL and PATIENT-WAITS as a wrapper's body reads them: false in the
// fast one, where their slow-path bits are known to be clear.
template <bool kSlow>
bool potential() {
  return kSlow && mode.potential;
}
template <bool kSlow>
bool patient_waits() {
  return kSlow && mode.patient_waits;
}

CallRecord point_to_point(CallShape shape, const void* buf, MPI_Count count, MPI_Datatype datatype, int peer,
                          int tag, MPI_Comm comm) {
  CallRecord r;
  r.shape = shape;
  r.buffer = buf;
  r.count = count;
  r.datatype = datatype;
  r.peer = peer;
  r.tag = tag;
  r.comm = comm;
  return r;
}

CallRecord send_to(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  return point_to_point(CallShape::Send, buf, count, datatype, dest, tag, comm);
}

CallRecord receive_from(const void* buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                        MPI_Comm comm) {
  return point_to_point(CallShape::Receive, buf, count, datatype, source, tag, comm);
}

CallRecord probe(int source, int tag, MPI_Comm comm) {
  return point_to_point(CallShape::Probe, nullptr, 0, MPI_DATATYPE_NULL, source, tag, comm);
}

CallRecord matched_receive(const void* buf, MPI_Count count, MPI_Datatype datatype) {
  return point_to_point(CallShape::MatchedReceive, buf, count, datatype, MPI_PROC_NULL, 0, MPI_COMM_NULL);
}

CallRecord send_receive(const void* buf, MPI_Count count, MPI_Datatype datatype, int dest, int send_tag, int source,
                        int recv_tag, MPI_Comm comm) {
  CallRecord r = point_to_point(CallShape::SendReceive, buf, count, datatype, dest, send_tag, comm);
  r.source = source;
  r.recv_tag = recv_tag;
  return r;
}

// A collective of `shape` on comm, counted there as its next collective.
CallRecord counted_collective(FunctionId function, CallShape shape, const void* buf, MPI_Count count, MPI_Datatype datatype,
                              int root, MPI_Op op, MPI_Comm comm) {
  CallRecord r = point_to_point(shape, buf, count, datatype, root, 0, comm);
  r.op = op;
  const comms::Collective counted = comms::enter_collective(comm, function);
  r.comm_id = counted.id;
  r.sequence = counted.sequence;
  return r;
}

CallRecord collective(FunctionId function, MPI_Comm comm) {
  return counted_collective(function, CallShape::Collective, nullptr, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, MPI_OP_NULL, comm);
}

CallRecord collective_data(FunctionId function, const void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Comm comm) {
  return counted_collective(function, CallShape::Collective, buf, count, datatype, MPI_PROC_NULL, MPI_OP_NULL, comm);
}

CallRecord reduction(FunctionId function, const void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return counted_collective(function, CallShape::Collective, buf, count, datatype, MPI_PROC_NULL, op, comm);
}

CallRecord rooted(FunctionId function, const void* buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return counted_collective(function, CallShape::Rooted, buf, count, datatype, root, MPI_OP_NULL, comm);
}

CallRecord rooted_reduction(FunctionId function, const void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm) {
  return counted_collective(function, CallShape::Rooted, buf, count, datatype, root, op, comm);
}

CallRecord neighborhood(FunctionId function, MPI_Comm comm) {
  return counted_collective(function, CallShape::Neighborhood, nullptr, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, MPI_OP_NULL,
                            comm);
}

// A collective over a file's communicator, counted on the file's own id.
CallRecord file_collective(MPI_File fh) {
  CallRecord r;
  r.shape = CallShape::FileCollective;
  r.file = {fh, -1};
  const comms::Collective counted = comms::enter_collective(fh);
  r.comm_id = counted.id;
  r.sequence = counted.sequence;
  return r;
}

// File reads and writes; `offset` is -1 for those at a file pointer.
CallRecord with_file_data(CallRecord r, MPI_Offset offset, const void* buf, MPI_Count count, MPI_Datatype datatype) {
  r.file.offset = offset;
  r.buffer = buf;
  r.count = count;
  r.datatype = datatype;
  return r;
}

CallRecord file_collective_data(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count,
                                MPI_Datatype datatype) {
  return with_file_data(file_collective(fh), offset, buf, count, datatype);
}

// Independent file access: blocks on the file system, never on another rank.
CallRecord file_access(MPI_File fh, MPI_Offset offset, const void* buf, MPI_Count count, MPI_Datatype datatype) {
  CallRecord r;
  r.shape = CallShape::FileAccess;
  r.file.handle = fh;
  r.comm_id = comms::id_of(fh);  // for the report: which file
  return with_file_data(r, offset, buf, count, datatype);
}

// Accept, connect, spawn (and join, with no comm): collective over comm
// (counted there, so that a member in another collective is a mismatch) and
// waiting for processes outside the job, which the checker cannot see.
CallRecord connection(FunctionId function, int root, MPI_Comm comm) {
  return counted_collective(function, CallShape::Connection, nullptr, 0, MPI_DATATYPE_NULL, root, MPI_OP_NULL, comm);
}

// A call whose waits the checker cannot read (its comm is still printed).
CallRecord unreadable(MPI_Comm comm) {
  CallRecord r;
  r.comm = comm;
  return r;
}

CallRecord on_requests(int count, const MPI_Request* array) {
  CallRecord r;
  r.shape = CallShape::Requests;
  r.request_count = count;
  if (array != nullptr)
    for (int i = 0; i < std::min(count, kCopiedRequests); ++i) r.requests[i] = array[i];  // no call to memmove
  return r;
}

// A window synchronization call on `win`, with its window's identity.
CallRecord on_window(MPI_Win win, int assertion = 0) {
  CallRecord r;
  r.shape = CallShape::Window;
  const windows::Known known = windows::find(win);
  r.window.handle = win;
  r.window.assertion = assertion;
  r.window.id = known.id;
  r.window.lock_type = 0;
  r.window.group_size = 0;
  r.comm_id = known.comm_id;
  return r;
}

// MPI_Win_fence and MPI_Win_free: counted as the window's next collective.
CallRecord window_collective(MPI_Win win, int assertion = 0) {
  CallRecord r = on_window(win, assertion);
  r.sequence = windows::enter_collective(win);
  return r;
}

// MPI_Win_start and MPI_Win_post: the group is kept for the epoch's end.
CallRecord epoch_start(windows::Epoch epoch, MPI_Group group, int assertion, MPI_Win win) {
  CallRecord r = on_window(win, assertion);
  windows::begin_epoch(epoch, win, group, r);
  return r;
}

// MPI_Win_complete, MPI_Win_wait and MPI_Win_test: with the epoch's group.
CallRecord epoch_end(windows::Epoch epoch, MPI_Win win) {
  CallRecord r = on_window(win);
  windows::end_epoch(epoch, win, r);
  return r;
}

// Passive target: lock, unlock and flush of one target rank.
CallRecord on_target(int rank, MPI_Win win, int lock_type = 0, int assertion = 0) {
  CallRecord r = on_window(win, assertion);
  r.peer = rank;
  r.window.lock_type = lock_type;
  return r;
}

CallRecord opaque() {
  CallRecord r;
  r.shape = CallShape::Opaque;
  return r;
}

// A request the call started (or a persistent one it made): remembered with
// its communicator's identity and, for a point-to-point operation, its
// tallies, which count the send it starts now (a persistent request's
// sends are counted at each MPI_Start).
void started_request(MPI_Request request, CallRecord& record) {
  tallies::CommTallies* tallies = is_point_to_point(record) ? tallies_for(record.comm) : nullptr;
  if (record.comm_id == 0) record.comm_id = tallies ? tallies->comm_id() : comms::id_of(record.comm);
  if (is_persistent_collective(record)) record.persistent = {persistent_collectives::made(record.comm), 0};
  if (tallies && function_info(record.function).form != Form::Persistent) count_started(*tallies, record);
  requests().remember(request, record, tallies);
}

// MPI_Start and MPI_Startall: the request is active again; a send sends
// one message more.
void restarted_request(MPI_Request request) {
  CallRecord started;
  tallies::CommTallies* tallies = nullptr;
  // A partitioned send's message is counted when its last partition is readied.
  if (requests().activate(request, started, tallies) && !partitioned_requests::started_send(request, tallies) &&
      tallies != nullptr)
    count_started(*tallies, started);
}

// MPI_Pready*, before the call: `count` partitions of the request's start
// readied; the last one sends its message, counted now, before the receiver
// may count it, and gives its buffer to MPI.
void readied_partitions(MPI_Request request, int count) {
  const partitioned_requests::Readied readied = partitioned_requests::readied(request, count);
  if (!readied.last) return;
  if (checks::tracking()) checks::partitioned_send_readied(request);
  if (CallRecord started; readied.tallies != nullptr && requests().find(request, started))
    count_started(*readied.tallies, started);
}

}  // namespace
}  // namespace mpisentry

using namespace mpisentry;

// One definition per function of src/api/mpi_api.json, generated at build
// time (src/api/generate_api.py) into the build directory as plain C++: a
// compiler error or a breakpoint in a wrapper points at its own lines there.
// Each is one body run fast or slow (interceptors/protocol.hpp); what follows
// is what the slow body does, the fast one only what the defaults need.
// Calls that may wait record the call, forward it and record its end (a
// blocking call's return is progress; a polling call's only when it succeeded
// and completed something). Nonblocking starts never wait: only their request
// is remembered, with its communicator's id, for the waits to come. The
// message, request and collective checks' object, when the function has
// one, is held around the forwarded call: (check).done(forward), see
// checks/calls.hpp.
#include "interceptors/mpi_wrappers.inc"

namespace {

// A call that frees or closes *handle, collective over its group: MPI sets
// *handle to the null handle and may hand the handle out again, so `forget`
// drops what the checker knows of it (taken before the call) only once the
// call succeeded.
template <typename Handle, typename Forget>
int release_handle(Handle* handle, FunctionId function, int (*release)(Handle*), CallRecord record, Forget forget) {
  ThreadState& self = enter_call(record, function);
  const int result = release(handle);
  if (result == MPI_SUCCESS)
    forget();
  else
    checks::call_failed(record, result);
  self.leave(true);
  checks::stop_at_error_limit();
  return result;
}

// Release, after the collective checks' exchange and the message checks'
// look at what is pending on the communicator (collective over it, so
// inside the recorded call).
template <int (*Release)(MPI_Comm*), FunctionId Function>
int checked_release(MPI_Comm* comm) {
  if (checks::collective_checking() && comm) checks::collectives_freeing(*comm, Function);
  if (checks::shadowing() && comm) checks::communicator_freeing(*comm);
  return Release(comm);
}

template <int (*Release)(MPI_Comm*), FunctionId Function>
int release_communicator(MPI_Comm* comm) {
  const MPI_Comm freeing = comm ? *comm : MPI_COMM_NULL;
  const std::uint64_t freeing_id = comms::id_of(freeing);
  return release_handle(comm, Function, checked_release<Release, Function>, collective(Function, freeing), [&] {
    comms::freed(freeing, freeing_id);
    checks::freed(checks::HandleKind::Comm, freeing);
  });
}

}  // namespace

MPISENTRY_API int MPI_Comm_free(MPI_Comm* comm) {
  return release_communicator<PMPI_Comm_free, FunctionId::Comm_free>(comm);
}

MPISENTRY_API int MPI_Comm_disconnect(MPI_Comm* comm) {
  return release_communicator<PMPI_Comm_disconnect, FunctionId::Comm_disconnect>(comm);
}

MPISENTRY_API int MPI_File_close(MPI_File* fh) {
  const MPI_File closing = fh ? *fh : MPI_FILE_NULL;
  const std::uint64_t closing_id = comms::id_of(closing);
  return release_handle(fh, FunctionId::File_close, PMPI_File_close, file_collective(closing), [&] {
    comms::closed_file(closing, closing_id);
    checks::freed(checks::HandleKind::File, closing);
  });
}

MPISENTRY_API int MPI_Win_free(MPI_Win* win) {
  const CallRecord record = window_collective(win ? *win : MPI_WIN_NULL);
  return release_handle(win, FunctionId::Win_free, PMPI_Win_free, record, [&] {
    windows::freed(record.window.handle, record.window.id);
    checks::freed(checks::HandleKind::Win, record.window.handle);
    checks::rma_window_freed(record.window.handle);
  });
}

// Persistent starts and frees only change the state of requests that their
// start recorded: active in the request table, and in the request checks.
MPISENTRY_API int MPI_Start(MPI_Request* request) {
  const int result = PMPI_Start(request);
  if (result == MPI_SUCCESS && request) restarted_request(*request);
  if (result == MPI_SUCCESS && checks::watching_partitions()) checks::partitioned_started(1, request);
  if (result == MPI_SUCCESS && checks::tracking()) checks::restarted(1, request, MPISENTRY_CALL_SITE);
  if (result == MPI_SUCCESS && comm_log::on()) comm_log::restarted(1, request, MPISENTRY_CALL_SITE);
  return result;
}

MPISENTRY_API int MPI_Startall(int count, MPI_Request array_of_requests[]) {
  const int result = PMPI_Startall(count, array_of_requests);
  if (result == MPI_SUCCESS && array_of_requests)
    for (int i = 0; i < count; ++i) restarted_request(array_of_requests[i]);
  if (result == MPI_SUCCESS && checks::watching_partitions()) checks::partitioned_started(count, array_of_requests);
  if (result == MPI_SUCCESS && checks::tracking())
    checks::restarted(count, array_of_requests, MPISENTRY_CALL_SITE);
  if (result == MPI_SUCCESS && comm_log::on()) comm_log::restarted(count, array_of_requests, MPISENTRY_CALL_SITE);
  return result;
}

// The checks keep what they read of a datatype until it is freed: MPI may
// hand the handle out again for another type.
MPISENTRY_API int MPI_Type_commit(MPI_Datatype* datatype) {
  const int result = PMPI_Type_commit(datatype);
  if (result == MPI_SUCCESS && datatype) checks::datatype_committed(*datatype);
  return result;
}

MPISENTRY_API int MPI_Type_free(MPI_Datatype* datatype) {
  if (datatype) checks::datatype_gone(*datatype);
  if (datatype) checks::type_freed(*datatype);
  checks::datatype_freed();
  return checks::freed_by(PMPI_Type_free, checks::HandleKind::Datatype, datatype);
}

// A send that MPI_Cancel undoes is no message: its completion tells
// (RequestTable::cancelling, outcomes::CompletedRequests).
MPISENTRY_API int MPI_Cancel(MPI_Request* request) {
  if (request) requests().cancelling(*request);
  return PMPI_Cancel(request);
}

// An active request goes on after MPI_Request_free, with no handle: it is
// kept as active for good (RequestTable::release), before MPI may hand the
// handle out again.
MPISENTRY_API int MPI_Request_free(MPI_Request* request) {
  if (checks::tracking() && request) checks::freeing(*request);
  if (request && checks::watching_partitions()) checks::partitioned_freed(*request);
  if (request) partitioned_requests::freed(*request);
  if (CallRecord started; request && requests().find(*request, started) && is_persistent_collective(started))
    persistent_collectives::freed(started.persistent.id);
  if (request) requests().release(*request);
  return PMPI_Request_free(request);
}

void mpisentry::interceptors::start(const Mode& chosen) {
  mode = chosen;
  if (mode.potential) slow_paths::take(slow_paths::kPotential);
  if (mode.patient_waits) slow_paths::take(slow_paths::kPatientWaits);
}
