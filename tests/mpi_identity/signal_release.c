/* On 2 ranks at MPI_THREAD_MULTIPLE, a worker thread of each rank receives,
 * in the helper library (release_helpers.c), the message that the other
 * rank's main thread sends once it is released; the main thread waits for
 * that on a semaphore, outside MPI. Only the library's signal handler can
 * release it:
 *   alarm SECONDS  the handler of SIGALRM, installed before MPI_Init, posts
 *                  the semaphore; alarm() raises SIGALRM after SECONDS: the
 *                  job ends
 *   timer SECONDS  an SA_SIGINFO handler of SIGUSR2, installed after
 *                  MPI_Init, posts it; a POSIX timer raises SIGUSR2 after
 *                  SECONDS: the job ends
 *   none           no handler, no signal: a deadlock
 * Built linked with the library (libmpihelpers.so, libucs_helpers.so), or,
 * with HELPERS_LIBRARY defined as its path, loading it with dlopen after
 * MPI_Init (libmpich_extra.so). */
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

enum { kAlarm, kTimer, kNone };
static const char* const kVariants[] = {"alarm", "timer", "none"};

typedef void (*ReleaseOn)(int signal_number, sem_t* semaphore, int with_info);
typedef void (*Receive)(int source, int tag, MPI_Comm comm);

#ifdef HELPERS_LIBRARY
static ReleaseOn helpers_release_on;
static Receive helpers_receive;

static void load_helpers(void) {
  void* library = dlopen(HELPERS_LIBRARY, RTLD_NOW);
  if (library == NULL) {
    fprintf(stderr, "signal_release: %s\n", dlerror());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  helpers_release_on = (ReleaseOn)dlsym(library, "helpers_release_on");
  helpers_receive = (Receive)dlsym(library, "helpers_receive");
}
#else
void helpers_release_on(int signal_number, sem_t* semaphore, int with_info);
void helpers_receive(int source, int tag, MPI_Comm comm);

static void load_helpers(void) {}
#endif

static int rank;
static sem_t released;

static void* worker(void* argument) {
  (void)argument;
  helpers_receive(1 - rank, 0, MPI_COMM_WORLD); /* mpisentry: blocks */
  return NULL;
}

static void arm_timer(double seconds) {
  struct sigevent event = {0};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGUSR2;
  timer_t timer;
  struct itimerspec after = {{0, 0}, {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)}};
  if (timer_create(CLOCK_MONOTONIC, &event, &timer) != 0 || timer_settime(timer, 0, &after, NULL) != 0) {
    perror("signal_release: timer");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

int main(int argc, char** argv) {
  sem_init(&released, 0, 0);
#ifndef HELPERS_LIBRARY
  /* Before MPI_Init: the handler is there when MPI starts. */
  if (argc > 1 && strcmp(argv[1], "alarm") == 0) helpers_release_on(SIGALRM, &released, 0);
#endif
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  rank = world_rank_checked(2, 2);
  const int variant = variant_argument(argc, argv, 1, "variant", kVariants, 3);
  const double seconds = variant == kNone ? 0 : seconds_argument(argc, argv, 2, "seconds");
  load_helpers();
#ifdef HELPERS_LIBRARY
  if (variant == kAlarm) helpers_release_on(SIGALRM, &released, 0);
#endif
  if (variant == kTimer) helpers_release_on(SIGUSR2, &released, 1);

  pthread_t receiver;
  pthread_create(&receiver, NULL, worker, NULL);
  if (variant == kAlarm) alarm((unsigned)seconds);
  if (variant == kTimer) arm_timer(seconds);
  while (sem_wait(&released) != 0 && errno == EINTR) {
  }
  const int value = 1;
  MPI_Send(&value, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
  pthread_join(receiver, NULL);
  MPI_Finalize();
  if (rank == 0) printf("released\n");
  return 0;
}
