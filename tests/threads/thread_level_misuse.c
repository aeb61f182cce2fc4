/* Bad input: at the thread level argv[1] (single or funneled), rank 0 calls
 * MPI from a second thread, which the level does not allow: 20 sends to rank
 * 1, 20 ms apart, while the main thread waits for the thread outside MPI.
 * MPICH's own behaviour is that the sends arrive; the checker adds one
 * LOCAL:THREAD:NOT_MAIN report and one notice. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "support.h"

static const char* const kLevelNames[] = {"single", "funneled"};
static const int kLevels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED};
enum { kMessages = 20, kTag = 5 };

static void* send_from_second_thread(void* unused) {
  (void)unused;
  const struct timespec pause = {0, 20 * 1000 * 1000};
  for (int i = 0; i < kMessages; ++i) {
    MPI_Send(&i, 1, MPI_INT, 1, kTag, MPI_COMM_WORLD);
    nanosleep(&pause, NULL);
  }
  return NULL;
}

int main(int argc, char** argv) {
  int level = MPI_THREAD_SINGLE;
  for (int i = 0; i < 2; ++i)
    if (argc > 1 && strcmp(argv[1], kLevelNames[i]) == 0) level = kLevels[i];
  int provided = -1;
  MPI_Init_thread(&argc, &argv, level, &provided);
  variant_argument(argc, argv, 1, "the thread level", kLevelNames, 2);
  const int rank = world_rank_checked(2, 2);
  if (rank == 0) {
    pthread_t sender;
    pthread_create(&sender, NULL, send_from_second_thread, NULL);
    pthread_join(sender, NULL);
  } else {
    int sum = 0;
    for (int i = 0; i < kMessages; ++i) {
      int value = 0;
      MPI_Recv(&value, 1, MPI_INT, 0, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      sum += value;
    }
    printf("provided %d, received sum %d\n", provided, sum);
  }
  MPI_Finalize();
  return 0;
}
