// The MPI API as the program sees it: every function of mpi_functions.def
// records the call in the rank's Activity and forwards to PMPI. MPICH's
// Fortran bindings call these C functions, so Fortran programs are covered.
#include <mpi.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>

#include "monitor/monitor.hpp"
#include "wrappers/call_record.hpp"
#include "wrappers/delay_injection.hpp"
#include "wrappers/patient_wait.hpp"

#define MPISENTRY_API extern "C" __attribute__((visibility("default")))

namespace mpisentry {
namespace {

// Set once in MPI_Init, before the program's first wrapped call.
bool potential_mode = false;
bool patient_waits = false;  // see patient_wait.hpp
int program_thread_level = MPI_THREAD_SINGLE;
bool monitor_running = false;

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

CallRecord collective(MPI_Comm comm) {
  CallRecord r;
  r.shape = CallShape::Collective;
  r.comm = comm;
  return r;
}

CallRecord collective_data(const void* buf, MPI_Count count, MPI_Datatype datatype, MPI_Comm comm) {
  return point_to_point(CallShape::Collective, buf, count, datatype, MPI_PROC_NULL, 0, comm);
}

CallRecord rooted(const void* buf, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return point_to_point(CallShape::Rooted, buf, count, datatype, root, 0, comm);
}

CallRecord neighborhood(MPI_Comm comm) {
  CallRecord r = collective(comm);
  r.shape = CallShape::Neighborhood;
  return r;
}

CallRecord on_requests(int count, const MPI_Request* array) {
  CallRecord r;
  r.shape = CallShape::Requests;
  r.request_count = count;
  r.requests = array;
  return r;
}

CallRecord window() {
  CallRecord r;
  r.shape = CallShape::Window;
  return r;
}

// Completes what every wrapper records and marks the rank as inside the call.
inline void enter(CallRecord& record, FunctionId function, const void* call_site) {
  record.function = function;
  record.call_site = call_site;
  record.thread = pthread_self();
  activity().enter(record);
}

}  // namespace
}  // namespace mpisentry

using namespace mpisentry;

// The body of the wrappers of calls that may wait: record the call, forward
// it, record its end.
#define MPISENTRY_WAITING_WRAPPER(name, params, describe, converted, forward, progressed) \
  MPISENTRY_API int MPI_##name params {                                                \
    delay_injection::around_call(true);                                                \
    CallRecord record = describe;                                                      \
    record.converted_send = converted;                                                 \
    enter(record, FunctionId::name, __builtin_return_address(0));                      \
    const int result = forward;                                                        \
    activity().leave(progressed);                                                      \
    delay_injection::around_call(false);                                               \
    return result;                                                                     \
  }

// Nonblocking starts never wait: only their request is remembered, for the
// waits to come.
#define MPISENTRY_START_WRAPPER(name, params, describe, converted, forward, request) \
  MPISENTRY_API int MPI_##name params {                                           \
    delay_injection::around_call(true);                                           \
    const int result = forward;                                                   \
    if (result == MPI_SUCCESS) {                                                  \
      CallRecord record = describe;                                               \
      record.converted_send = converted;                                          \
      record.function = FunctionId::name;                                         \
      record.call_site = __builtin_return_address(0);                             \
      requests().remember(*(request), record);                                    \
    }                                                                             \
    activity().count_start();                                                     \
    delay_injection::around_call(false);                                          \
    return result;                                                                \
  }

#define MPISENTRY_BLOCKING(name, params, args, describe) \
  MPISENTRY_WAITING_WRAPPER(name, params, describe, false, PMPI_##name args, true)

#define MPISENTRY_WAIT(name, params, args, describe, patient) \
  MPISENTRY_WAITING_WRAPPER(name, params, describe, false, patient_waits ? (patient) : PMPI_##name args, true)

#define MPISENTRY_STANDARD_SEND(name, sync_name, params, args, describe, patient)                        \
  MPISENTRY_WAITING_WRAPPER(name, params, describe, potential_mode,                                      \
                            patient_waits    ? (patient)                                                 \
                            : potential_mode ? PMPI_##sync_name args                                     \
                                             : PMPI_##name args,                                         \
                            true)

#define MPISENTRY_POLLING(name, params, args, describe, completed) \
  MPISENTRY_WAITING_WRAPPER(name, params, describe, false, PMPI_##name args, result == MPI_SUCCESS && (completed))

#define MPISENTRY_NONBLOCKING(name, params, args, describe, request) \
  MPISENTRY_START_WRAPPER(name, params, describe, false, PMPI_##name args, request)

#define MPISENTRY_STANDARD_ISEND(name, sync_name, params, args, describe, request) \
  MPISENTRY_START_WRAPPER(name, params, describe, potential_mode,                  \
                          potential_mode ? PMPI_##sync_name args : PMPI_##name args, request)

#include "wrappers/mpi_functions.def"

namespace {

// More ranks on this node than cores its ranks may run on, all together
// (each may be bound to one).
bool more_ranks_than_cores() {
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return false;
  int ranks_on_node = 1;
  PMPI_Comm_size(node, &ranks_on_node);
  cpu_set_t mine, node_cores;
  CPU_ZERO(&mine);
  CPU_ZERO(&node_cores);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) CPU_SET(0, &mine);
  PMPI_Allreduce(&mine, &node_cores, sizeof(cpu_set_t), MPI_BYTE, MPI_BOR, node);
  PMPI_Comm_free(&node);
  return ranks_on_node > CPU_COUNT(&node_cores);
}

// The monitor needs MPI_THREAD_MULTIPLE; the program is told the level it
// asked for, as MPI would have given it.
int initialize(int* argc, char*** argv, int required, int* provided) {
  int granted = MPI_THREAD_SINGLE;
  const int result = PMPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &granted);
  if (result != MPI_SUCCESS) return result;
  program_thread_level = std::min(required, granted);
  requests().set_concurrent_writers(program_thread_level == MPI_THREAD_MULTIPLE);
  if (provided) *provided = program_thread_level;
  const monitor::Started started = monitor::start(granted);
  monitor_running = started.running;
  potential_mode = started.potential_mode;
  const std::string& patient = started.settings.patient_waits;  // PATIENT-WAITS: auto, on or off
  patient_waits = started.running && (patient == "on" || (patient == "auto" && more_ranks_than_cores()));
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  delay_injection::configure(started.settings.inject_delays, rank);
  return result;
}

}  // namespace

MPISENTRY_API int MPI_Init(int* argc, char*** argv) {
  return initialize(argc, argv, MPI_THREAD_SINGLE, nullptr);
}

MPISENTRY_API int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return initialize(argc, argv, required, provided);
}

MPISENTRY_API int MPI_Query_thread(int* provided) {
  const int result = PMPI_Query_thread(provided);
  if (result == MPI_SUCCESS && monitor_running) *provided = program_thread_level;
  return result;
}

MPISENTRY_API int MPI_Finalize(void) {
  CallRecord record;
  record.shape = CallShape::Finalize;
  enter(record, FunctionId::Finalize, __builtin_return_address(0));
  // Blocks until every rank is here: the monitors stop after the same round.
  monitor::stop();
  monitor_running = false;
  const int result = PMPI_Finalize();
  activity().leave(true);
  return result;
}
