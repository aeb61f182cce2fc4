/* MPI called from threads as the thread level allows or not (two ranks).
 * argv[1], the case; rank 0 sends rank 1 one int (tag 1), and in the
 * SERIALIZED cases rank 1 answers (tag 2):
 *   single_worker: MPI_Init; a second thread of rank 0 sends: NOT_MAIN;
 *   funneled_worker: MPI_THREAD_FUNNELED, the same: NOT_MAIN;
 *   funneled_main: MPI_THREAD_FUNNELED, the second thread computes the
 *     value and rank 0's main thread sends it after the join (correct);
 *   serialized_overlap: MPI_THREAD_SERIALIZED; rank 0's main thread waits
 *     in MPI_Recv for the answer while the second thread sends:
 *     CONCURRENT;
 *   serialized_turns: MPI_THREAD_SERIALIZED; the second thread sends, and
 *     rank 0's main thread receives the answer after the join (correct).
 * Rank 1 prints what it got. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char* mode;
static int value;

static int is(const char* name) { return strcmp(mode, name) == 0; }

static void send_value(void) {
  MPI_Send(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* mpisentry: send */
}

static void* worker(void* unused) {
  (void)unused;
  value = 42;
  if (is("funneled_main")) return NULL;
  if (is("serialized_overlap")) usleep(300 * 1000); /* rank 0's main thread is in MPI_Recv by then */
  send_value();
  return NULL;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "funneled_main";
  const int required = strncmp(mode, "single", 6) == 0     ? MPI_THREAD_SINGLE
                       : strncmp(mode, "funneled", 8) == 0 ? MPI_THREAD_FUNNELED
                                                           : MPI_THREAD_SERIALIZED;
  int provided = MPI_THREAD_SINGLE, rank = 0;
  if (required == MPI_THREAD_SINGLE)
    MPI_Init(&argc, &argv);
  else
    MPI_Init_thread(&argc, &argv, required, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int answers = required == MPI_THREAD_SERIALIZED;
  int answer = 0;
  if (rank == 0) {
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    if (is("serialized_overlap")) MPI_Recv(&answer, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_join(thread, NULL);
    if (is("funneled_main")) send_value();
    if (is("serialized_turns")) MPI_Recv(&answer, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (answers) MPI_Send(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    printf("thread_levels %s: received %d\n", mode, value);
  }
  MPI_Finalize();
  return 0;
}
