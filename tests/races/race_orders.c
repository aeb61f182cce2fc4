/* Programs whose outcome depends on which message arrives first, for
 * RECORD and REPLAY. The first argument picks one:
 *   hang      rank 0 receives from MPI_ANY_SOURCE, then from rank 1: when
 *             rank 1's message is the first, the second receive never
 *             completes (ranks 1 and 2 wait in MPI_Barrier). A hang or not.
 *   crash     the same race, and rank 0 crashes (SIGSEGV) at once when rank 1's
 *             message is the first.
 *   order     rank 0 takes 4 tasks from each worker from MPI_ANY_SOURCE, in
 *             blocking receives and in Irecv + Wait, and prints a checksum of
 *             the order of arrival.
 *   waitany   the same through MPI_Waitany on one receive per worker.
 *   waitsome  the same through MPI_Waitsome.
 *   testsome  the same through a loop of MPI_Testsome.
 *   iprobe    after an MPI_Iprobe of MPI_PROC_NULL (which finds its empty message),
 *             the same through a loop of MPI_Iprobe(MPI_ANY_SOURCE) and
 *             MPI_Recv of what it found; prints how often it found nothing.
 *   test      the same through a loop of MPI_Test on each worker's receive
 *             in turn; prints how often it found nothing.
 *   ring      no race: each rank sends to the next and receives from the
 *             previous.
 * RACE_DELAY_RANK=r (environment, so that the command line stays the same):
 * rank r sleeps 300 ms before it sends, so the others win (r = 0: no rank
 * sleeps, and rank 0 sleeps before it receives, so every message is there).
 * Otherwise each worker sleeps a random few hundred microseconds (seeded by
 * the time and its pid) before each send, so the order differs from run to
 * run. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { kTasks = 4 };

static int rank, size;

static void pause_before_send(int task) {
  const char* delayed = getenv("RACE_DELAY_RANK");
  if (delayed) {
    if (atoi(delayed) == rank && task == 0) usleep(300000);
    return;
  }
  usleep((useconds_t)(rand() % 400));
}

static unsigned long long checksum = 1469598103934665603ULL;
static void arrived(int source, int value) {
  checksum = (checksum ^ (unsigned long long)(source * 1000 + value)) * 1099511628211ULL;
}

static void workers_send(void) {
  for (int task = 0; task < kTasks; ++task) {
    pause_before_send(task);
    MPI_Send(&task, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
  }
}

static void receive_in_order(void) {
  const int total = kTasks * (size - 1);
  const char* delayed = getenv("RACE_DELAY_RANK");
  if (delayed && atoi(delayed) == 0) usleep(300000);
  for (int i = 0; i < total; ++i) {
    int value = 0;
    MPI_Status status;
    if (i % 2 == 0) {
      MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status); /* mpisentry: races */
    } else {
      MPI_Request request;
      MPI_Irecv(&value, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &request); /* mpisentry: races */
      MPI_Wait(&request, &status);
    }
    arrived(status.MPI_SOURCE, value);
  }
}

/* One receive per worker, completed by `how`, reposted until every task came. */
static void receive_by_completion(const char* how) {
  const int workers = size - 1;
  int* values = calloc((size_t)workers, sizeof(int));
  int* indices = calloc((size_t)workers, sizeof(int));
  MPI_Request* requests = calloc((size_t)workers, sizeof(MPI_Request));
  MPI_Status* statuses = calloc((size_t)workers, sizeof(MPI_Status));
  int* left = calloc((size_t)workers, sizeof(int));
  for (int w = 0; w < workers; ++w) {
    left[w] = kTasks;
    MPI_Irecv(&values[w], 1, MPI_INT, w + 1, 7, MPI_COMM_WORLD, &requests[w]);
  }
  long empty_tests = 0;
  int next = 0;
  for (int done = 0; done < kTasks * workers;) {
    int count = 0;
    if (strcmp(how, "waitany") == 0) {
      MPI_Waitany(workers, requests, &indices[0], MPI_STATUS_IGNORE);
      count = 1;
    } else if (strcmp(how, "waitsome") == 0) {
      MPI_Waitsome(workers, requests, &count, indices, statuses);
    } else if (strcmp(how, "testsome") == 0) {
      MPI_Testsome(workers, requests, &count, indices, statuses);
    } else { /* test: each worker's receive in turn, while it has tasks left */
      int flag = 0;
      if (left[next] > 0) MPI_Test(&requests[next], &flag, MPI_STATUS_IGNORE);
      if (flag) {
        indices[0] = next;
        count = 1;
      }
      next = (next + 1) % workers;
    }
    if (count == 0) ++empty_tests;
    for (int k = 0; k < count; ++k) {
      const int w = indices[k];
      arrived(w + 1, values[w]);
      ++done;
      if (--left[w] > 0) MPI_Irecv(&values[w], 1, MPI_INT, w + 1, 7, MPI_COMM_WORLD, &requests[w]);
    }
  }
  if (strcmp(how, "test") == 0 || strcmp(how, "testsome") == 0) printf("empty tests %ld\n", empty_tests);
  free(values);
  free(indices);
  free(requests);
  free(statuses);
  free(left);
}

static void receive_by_probing(void) {
  long found_nothing = 0;
  int proc_null_found = 0;
  MPI_Iprobe(MPI_PROC_NULL, 7, MPI_COMM_WORLD, &proc_null_found, MPI_STATUS_IGNORE);
  if (!proc_null_found) printf("MPI_Iprobe from MPI_PROC_NULL found nothing\n");
  for (int done = 0; done < kTasks * (size - 1);) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &flag, &status);
    if (!flag) {
      ++found_nothing;
      continue;
    }
    int value = 0;
    MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    arrived(status.MPI_SOURCE, value);
    ++done;
  }
  printf("found nothing %ld\n", found_nothing);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  srand((unsigned)time(NULL) ^ (unsigned)getpid() * 2654435761u);
  const char* mode = argc > 1 ? argv[1] : "order";
  if (strcmp(mode, "crash") == 0) {
    if (rank == 0) {
      int first = 0;
      MPI_Status status;
      MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status);
      printf("first from %d\n", status.MPI_SOURCE);
      fflush(stdout);
      if (status.MPI_SOURCE == 1) *(volatile int*)NULL = 1;
      MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status);
    } else if (rank <= 2) {
      pause_before_send(0);
      MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "hang") == 0) {
    if (rank == 0) {
      int first = 0, second = 0;
      MPI_Status status;
      MPI_Recv(&first, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status);
      printf("first from %d\n", status.MPI_SOURCE);
      fflush(stdout);
      MPI_Recv(&second, 1, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank <= 2) {
      pause_before_send(0);
      MPI_Send(&rank, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (strcmp(mode, "ring") == 0) {
    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, (rank + size - 1) % size, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rank == 0) printf("ring %d\n", got);
  } else if (rank > 0) {
    workers_send();
  } else if (strcmp(mode, "order") == 0) {
    receive_in_order();
  } else if (strcmp(mode, "iprobe") == 0) {
    receive_by_probing();
  } else {
    receive_by_completion(mode);
  }
  if (rank == 0 && strcmp(mode, "ring") != 0 && strcmp(mode, "hang") != 0 && strcmp(mode, "crash") != 0)
    printf("checksum %llx\n", checksum);
  MPI_Finalize();
  return 0;
}
