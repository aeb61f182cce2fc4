/* Correct waits on requests whose handles MPICH hands out again after a
 * completed receive. argv[2]:
 *   idup: rank 0's MPI_Irecv from rank 2 completes, then rank 0 waits with
 *     MPI_Wait for MPI_Comm_idup while rank 1 computes for argv[1] seconds
 *     before joining it; rank 2 starts its idup and waits in MPI_Recv for
 *     rank 0's answer, sent after the idup.
 *   grequest: rank 0's MPI_Irecv from rank 1 completes, then rank 0 waits
 *     with MPI_Wait for a generalized request that a helper thread completes
 *     after argv[1] seconds; rank 1 waits in MPI_Recv for rank 0's answer.
 * argv[3] "show-handles" prints both handles of rank 0, to see the reuse. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "support.h"

enum Variant { kIdup, kGrequest };
static const char* const kVariants[] = {"idup", "grequest"};
enum { kAnswerTag = 9 };

static int show_handles = 0;

static void show(const char* what, MPI_Request request) {
  if (show_handles) printf("%s request handle %#x\n", what, (unsigned)MPI_Request_c2f(request));
}

/* Rank 0's receive from `peer` that completes: its handle is then free. */
static int receive_completed(int peer) {
  int value = 0;
  MPI_Request request;
  MPI_Irecv(&value, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &request);
  show("completed receive's", request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  return value;
}

static void answer(int peer, int value) { MPI_Send(&value, 1, MPI_INT, peer, kAnswerTag, MPI_COMM_WORLD); }

static int await_answer(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, kAnswerTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return value;
}

static void run_idup(int rank, double compute_seconds) {
  int value = 10 * rank;
  MPI_Comm dup;
  MPI_Request request;
  if (rank == 0) {
    value = receive_completed(2);
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &request);
    show("idup's", request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    answer(2, value);
    printf("received %d before the idup\n", value);
  } else if (rank == 1) {
    compute_for(compute_seconds);
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MPI_Comm_idup(MPI_COMM_WORLD, &dup, &request);
    value = await_answer();
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&dup);
}

static int query_nothing(void* state, MPI_Status* status) {
  (void)state;
  MPI_Status_set_elements(status, MPI_BYTE, 0);
  MPI_Status_set_cancelled(status, 0);
  status->MPI_SOURCE = MPI_UNDEFINED;
  status->MPI_TAG = MPI_UNDEFINED;
  return MPI_SUCCESS;
}
static int free_nothing(void* state) { (void)state; return MPI_SUCCESS; }
static int cancel_nothing(void* state, int complete) { (void)state; (void)complete; return MPI_SUCCESS; }

struct Completer {
  MPI_Request request;
  double seconds;
};

static void* complete_later(void* argument) {
  struct Completer* completer = argument;
  compute_for(completer->seconds);
  MPI_Grequest_complete(completer->request);
  return NULL;
}

static void run_grequest(int rank, double compute_seconds) {
  if (rank == 0) {
    const int value = receive_completed(1);
    struct Completer completer = {MPI_REQUEST_NULL, compute_seconds};
    MPI_Grequest_start(query_nothing, free_nothing, cancel_nothing, NULL, &completer.request);
    show("generalized", completer.request);
    MPI_Request request = completer.request;
    pthread_t helper;
    pthread_create(&helper, NULL, complete_later, &completer);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    pthread_join(helper, NULL);
    answer(1, value);
    printf("received %d before the generalized request\n", value);
  } else {
    const int value = 10 * rank;
    MPI_Send(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    await_answer();
  }
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const double compute_seconds = seconds_argument(argc, argv, 1, "the computation time");
  const enum Variant variant = variant_argument(argc, argv, 2, "the request", kVariants, 2);
  const int rank = world_rank_checked(variant == kIdup ? 3 : 2, variant == kIdup ? 3 : 2);
  show_handles = rank == 0 && argc > 3 && strcmp(argv[3], "show-handles") == 0;
  if (variant == kIdup)
    run_idup(rank, compute_seconds);
  else
    run_grequest(rank, compute_seconds);
  MPI_Finalize();
  return 0;
}
