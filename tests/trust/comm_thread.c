/* Correct programs with a communication thread (MPI_THREAD_MULTIPLE) that
 * waits in MPI while the main thread computes for argv[1] seconds. argv[2]:
 *   listener: on every rank a thread waits in MPI_Recv from any rank for a
 *     shutdown message, which the main thread sends to its own rank after
 *     computing, then joins the thread.
 *   thread_recv: a thread of rank 0 waits in MPI_Recv from rank 1 while the
 *     main thread computes; rank 1 waits in MPI_Recv from rank 0 for what
 *     rank 0's main thread sends after computing, then answers the thread.
 *   crossed: on every rank a thread waits in MPI_Recv from the other rank
 *     for what the other rank's main thread sends after computing: the two
 *     threads wait for each other's rank, and neither rank is stuck. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#include "support.h"

enum Variant { kListener, kThreadRecv, kCrossed };
static const char* const kVariants[] = {"listener", "thread_recv", "crossed"};
enum { kShutdownTag = 99, kRequestTag = 1, kReplyTag = 2, kLateTag = 7 };

static int other_rank;

static void* listen_for_shutdown(void* received) {
  MPI_Status status;
  MPI_Recv(received, 1, MPI_INT, MPI_ANY_SOURCE, kShutdownTag, MPI_COMM_WORLD, &status);
  return NULL;
}

static void* receive_reply(void* received) {
  MPI_Recv(received, 1, MPI_INT, 1, kReplyTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

static void* receive_late_message(void* received) {
  MPI_Recv(received, 1, MPI_INT, other_rank, kLateTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return NULL;
}

static void run_listener(int rank, double compute_seconds) {
  int received = 0;
  pthread_t listener;
  pthread_create(&listener, NULL, listen_for_shutdown, &received);
  compute_for(compute_seconds);
  const int shutdown = rank + 1;
  MPI_Send(&shutdown, 1, MPI_INT, rank, kShutdownTag, MPI_COMM_WORLD);
  pthread_join(listener, NULL);
  int total = 0;
  MPI_Reduce(&received, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("shutdown messages sum %d\n", total);
}

static void run_thread_recv(int rank, double compute_seconds) {
  int value = 0;
  if (rank == 0) {
    pthread_t receiver;
    pthread_create(&receiver, NULL, receive_reply, &value);
    compute_for(compute_seconds);
    const int request = 21;
    MPI_Send(&request, 1, MPI_INT, 1, kRequestTag, MPI_COMM_WORLD);
    pthread_join(receiver, NULL);
    printf("reply %d\n", value);
  } else if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, kRequestTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    value *= 2;
    MPI_Send(&value, 1, MPI_INT, 0, kReplyTag, MPI_COMM_WORLD);
  }
}

static void run_crossed(int rank, double compute_seconds) {
  int received = 0;
  pthread_t receiver;
  pthread_create(&receiver, NULL, receive_late_message, &received);
  compute_for(compute_seconds);
  const int late = 10 * (rank + 1);
  MPI_Send(&late, 1, MPI_INT, other_rank, kLateTag, MPI_COMM_WORLD);
  pthread_join(receiver, NULL);
  int total = 0;
  MPI_Reduce(&received, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("late messages sum %d\n", total);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(2, 2);
  other_rank = 1 - rank;
  const double compute_seconds = seconds_argument(argc, argv, 1, "the main threads' computation time");
  const enum Variant variant = variant_argument(argc, argv, 2, "the thread's role", kVariants, 3);
  if (variant == kListener)
    run_listener(rank, compute_seconds);
  else if (variant == kThreadRecv)
    run_thread_recv(rank, compute_seconds);
  else
    run_crossed(rank, compute_seconds);
  MPI_Finalize();
  return 0;
}
