/* The floor of what recording costs: a preloaded library of a few lines
 * that does what the deadlock checks' fast bodies must and nothing more. It
 * stores each call in a thread-local record under a sequence count, and
 * remembers each request's start (function, peer, tag, communicator) in a
 * table at the handle's Fibonacci hash, as the checker's request table
 * does, clearing it when a Waitall completes it (no probing: a collision
 * overwrites). Neither a monitor nor a
 * message count: what call_cost shows with it preloaded is the least a
 * checker that knows whom a Wait waits for can add (docs/performance.md).
 *   mpiexec -n 1 -genv LD_PRELOAD build/bench/libfloor.so build/bench/call_cost */
#include <mpi.h>
#include <stdint.h>

enum { kSlots = 8192 };

struct Record {
  uint64_t sequence;
  uint64_t words[5];
};
static __thread struct Record record;

struct Start {
  int64_t handle; /* + 1; 0: empty */
  int function, peer, tag;
  MPI_Comm comm;
};
static struct Start starts[kSlots];

static void enter(uint64_t function, uint64_t peer, uint64_t tag, uint64_t comm) {
  record.sequence++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  record.words[0] = function;
  record.words[1] = peer;
  record.words[2] = tag;
  record.words[3] = comm;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  record.sequence++;
}

static struct Start* start_of(MPI_Request request) {
  return &starts[((uint64_t)request + 1) * 0x9E3779B97F4A7C15ull >> 51]; /* 2^13 = kSlots */
}

static void remember(MPI_Request request, int function, int peer, int tag, MPI_Comm comm) {
  struct Start* start = start_of(request);
  start->function = function;
  start->peer = peer;
  start->tag = tag;
  start->comm = comm;
  start->handle = (int64_t)request + 1;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* r) {
  const int result = PMPI_Isend(buf, count, type, dest, tag, comm, r);
  if (result == MPI_SUCCESS) remember(*r, 1, dest, tag, comm);
  return result;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* r) {
  const int result = PMPI_Irecv(buf, count, type, source, tag, comm, r);
  if (result == MPI_SUCCESS) remember(*r, 2, source, tag, comm);
  return result;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  MPI_Request handles[256];
  const int kept = count < 256 ? count : 256;
  for (int i = 0; i < kept; ++i) handles[i] = requests[i];
  enter(3, (uint64_t)count, 0, 0);
  const int result = PMPI_Waitall(count, requests, statuses);
  for (int i = 0; i < kept; ++i) start_of(handles[i])->handle = 0;
  record.words[4]++;
  return result;
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  enter(4, (uint64_t)source, (uint64_t)tag, (uint64_t)comm);
  const int result = PMPI_Iprobe(source, tag, comm, flag, status);
  record.words[4]++;
  return result;
}
