/* At MPI_THREAD_MULTIPLE on 2 ranks, two worker threads per rank receive
 * from the other rank while the main thread waits for them outside MPI.
 *
 *   join          the workers receive tags that no rank sends; the main
 *                 thread waits in pthread_join: a deadlock
 *   join-correct  the same shape, but worker 1 computes for `seconds` and
 *                 then sends the tag that the other rank's worker 0
 *                 receives, and worker 0 sends worker 1's: the job ends
 *   cond          the workers receive tags that no rank sends; the main
 *                 thread waits on a condition variable the workers would
 *                 signal, and a third thread waits for a mutex the main
 *                 thread holds: a deadlock
 *   poll          the workers receive tags that no rank sends yet; the main
 *                 thread polls a flag with nanosleep for `seconds`, then
 *                 sends both tags itself: the job ends, having stalled
 *   timed         as poll, but the main thread waits on the condition
 *                 variable with a timeout, again and again, for `seconds` */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "support.h"

enum { kJoin, kJoinCorrect, kCond, kPoll, kTimed };
static const char* const kVariants[] = {"join", "join-correct", "cond", "poll", "timed"};

static int rank, variant;
static double seconds;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER; /* the main thread's, in cond */
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int done;

static void worker_receives(int tag) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 1 - rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
}

static void* worker(void* argument) {
  const int index = (int)(long)argument;
  const int tag = 100 + 10 * rank + index; /* the other rank sends 100 + 10 * rank + index */
  if (variant == kJoinCorrect && index == 1) {
    compute_for(seconds);
    const int value = 1;
    MPI_Send(&value, 1, MPI_INT, 1 - rank, 100 + 10 * (1 - rank) + 0, MPI_COMM_WORLD);
  }
  worker_receives(tag);
  if (variant == kJoinCorrect && index == 0) {
    const int value = 1;
    MPI_Send(&value, 1, MPI_INT, 1 - rank, 100 + 10 * (1 - rank) + 1, MPI_COMM_WORLD);
  }
  pthread_mutex_lock(&lock);
  ++done;
  pthread_cond_broadcast(&done_cond);
  pthread_mutex_unlock(&lock);
  return NULL;
}

static void* locker(void* argument) {
  (void)argument;
  pthread_mutex_lock(&held);
  pthread_mutex_unlock(&held);
  return NULL;
}

/* The main thread unblocks the other rank's workers itself. */
static void send_both(void) {
  for (int index = 0; index < 2; ++index) {
    const int value = 1;
    MPI_Send(&value, 1, MPI_INT, 1 - rank, 100 + 10 * (1 - rank) + index, MPI_COMM_WORLD);
  }
}

int main(int argc, char** argv) {
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  rank = world_rank_checked(2, 2);
  variant = variant_argument(argc, argv, 1, "variant", kVariants, 5);
  seconds = variant == kJoin || variant == kCond ? 0 : seconds_argument(argc, argv, 2, "seconds");
  pthread_t workers[2], third;
  for (long index = 0; index < 2; ++index) pthread_create(&workers[index], NULL, worker, (void*)index);
  if (variant == kCond) {
    pthread_mutex_lock(&held);
    pthread_create(&third, NULL, locker, NULL);
    pthread_mutex_lock(&lock);
    while (done < 2) pthread_cond_wait(&done_cond, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&held);
    pthread_join(third, NULL);
  } else if (variant == kPoll) {
    const double until = now_seconds() + seconds;
    const struct timespec pause = {0, 20 * 1000 * 1000};
    while (now_seconds() < until) {
      pthread_mutex_lock(&lock);
      const int finished = done;
      pthread_mutex_unlock(&lock);
      if (finished == 2) break;
      nanosleep(&pause, NULL);
    }
    send_both();
  } else if (variant == kTimed) {
    const double until = now_seconds() + seconds;
    pthread_mutex_lock(&lock);
    while (done < 2 && now_seconds() < until) {
      struct timespec deadline;
      clock_gettime(CLOCK_REALTIME, &deadline);
      deadline.tv_nsec += 200 * 1000 * 1000;
      if (deadline.tv_nsec >= 1000 * 1000 * 1000) {
        deadline.tv_sec += 1;
        deadline.tv_nsec -= 1000 * 1000 * 1000;
      }
      pthread_cond_timedwait(&done_cond, &lock, &deadline);
    }
    pthread_mutex_unlock(&lock);
    send_both();
  }
  for (int index = 0; index < 2; ++index) pthread_join(workers[index], NULL);
  MPI_Finalize();
  if (rank == 0) printf("joined\n");
  return 0;
}
