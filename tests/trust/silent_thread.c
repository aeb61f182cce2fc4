/* A thread that has never called MPI when the checker looks releases its
 * rank (MPI_THREAD_MULTIPLE). Rank 0's main thread waits in MPI_Recv for
 * rank 1, which waits in MPI_Recv for a message that rank 0's other thread
 * sends after argv[1] seconds: its first MPI call. argv[2]: who made that
 * thread:
 *   before_init: the program, before MPI_Init;
 *   after_init: the program, after MPI_Init;
 *   library: a library of the program (libsilent_helper.so), as it loads;
 *   openmp: libgomp, as the worker of an OpenMP parallel region.
 * argv[3]: what it does first: "compute" (busy), "sleep" (nanosleep), or
 * "never": it waits on a condition variable that nothing signals, and the
 * program hangs (the hang twin). */
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "silent_helper.h"
#include "support.h"

enum Maker { kBeforeInit, kAfterInit, kLibrary, kOpenmp };
static const char* const kMakers[] = {"before_init", "after_init", "library", "openmp"};
enum First { kCompute, kSleep, kNever };
static const char* const kFirsts[] = {"compute", "sleep", "never"};
enum { kToRank1 = 2, kToRank0 = 1 };

static double seconds;
static enum First first;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int mpi_ready;  /* the thread made before MPI_Init may call MPI */

static void wait_for_mpi(void) {
  pthread_mutex_lock(&lock);
  while (!mpi_ready) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
}

static void announce_mpi(void) {
  pthread_mutex_lock(&lock);
  mpi_ready = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

/* What rank 0's other thread does: its first MPI call comes after `first`. */
static void work(void) {
  wait_for_mpi();
  if (first == kCompute) {
    compute_for(seconds);
  } else if (first == kSleep) {
    const struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
    nanosleep(&pause, NULL);
  } else {
    pthread_mutex_lock(&lock);
    for (;;) pthread_cond_wait(&changed, &lock); /* never signalled for this */
  }
  const int value = 17;
  MPI_Send(&value, 1, MPI_INT, 1, kToRank1, MPI_COMM_WORLD);
}

static void* thread_body(void* unused) {
  (void)unused;
  work();
  return NULL;
}

static void wait_for_rank_1(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 1, kToRank0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  printf("rank 0 got %d\n", value);
}

static void rank_1(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, kToRank1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  value += 1;
  MPI_Send(&value, 1, MPI_INT, 0, kToRank0, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  seconds = seconds_argument(argc, argv, 1, "seconds before the thread's first MPI call");
  const enum Maker maker = variant_argument(argc, argv, 2, "who makes the thread", kMakers, 4);
  first = variant_argument(argc, argv, 3, "what the thread does first", kFirsts, 3);
  pthread_t thread;
  int rank = -1;
  /* Which rank this is, before MPI_Init: the thread is made on rank 0 only. */
  const char* const environment_rank = getenv("PMI_RANK") ? getenv("PMI_RANK") : getenv("OMPI_COMM_WORLD_RANK");
  const int rank_before_init = environment_rank ? atoi(environment_rank) : -1;
  if (maker == kBeforeInit && rank_before_init == 0) pthread_create(&thread, NULL, thread_body, NULL);
  if (maker == kLibrary && rank_before_init == 0) silent_helper_run(work);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  rank = world_rank_checked(2, 2);
  announce_mpi();
  if (rank == 1) {
    rank_1();
  } else if (maker == kOpenmp) {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0)
        wait_for_rank_1();
      else
        work();
    }
  } else {
    if (maker == kAfterInit) pthread_create(&thread, NULL, thread_body, NULL);
    wait_for_rank_1();
    if (maker == kLibrary)
      silent_helper_join();
    else
      pthread_join(thread, NULL);
  }
  MPI_Finalize();
  return 0;
}
