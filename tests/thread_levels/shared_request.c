/* Two threads of rank 0 completing requests at MPI_THREAD_MULTIPLE (two
 * ranks); argv[1], the case:
 *   shared: rank 0's main thread waits in MPI_Wait on a receive from rank 1
 *     while the second thread, 300 ms later, calls MPI_Test on the same
 *     request (CONCURRENT_REQUEST); rank 1 sends after 1.5 s;
 *   own (correct): each thread waits on its own receive, at once;
 *   reused (correct): each thread receives 2000 messages, one MPI_Irecv and
 *     MPI_Wait at a time, so that MPI hands the handle one thread's wait
 *     freed to the other thread's next receive.
 * Rank 1 sends with two threads too; rank 0 prints what it got. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { kReused = 2000 };
static const char* mode;
static int rank;
static MPI_Request shared_request = MPI_REQUEST_NULL;
static int got[2];

static int is(const char* name) { return strcmp(mode, name) == 0; }

static void* thread_main(void* which_pointer) {
  const int which = *(const int*)which_pointer;
  if (rank == 1) {
    if (is("shared")) {
      if (which == 0) {
        usleep(1500 * 1000);
        MPI_Send(&which, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
      }
      return NULL;
    }
    const int messages = is("reused") ? kReused : 1;
    for (int i = 0; i < messages; ++i) MPI_Send(&i, 1, MPI_INT, 0, which, MPI_COMM_WORLD);
    return NULL;
  }
  if (is("shared")) {
    if (which == 0) {
      MPI_Wait(&shared_request, MPI_STATUS_IGNORE);
    } else {
      int flag = 0;
      usleep(300 * 1000); /* the main thread is in MPI_Wait by then */
      MPI_Test(&shared_request, &flag, MPI_STATUS_IGNORE); /* mpisentry: test */
    }
    return NULL;
  }
  const int messages = is("reused") ? kReused : 1;
  for (int i = 0; i < messages; ++i) {
    MPI_Request request;
    int value = -1;
    MPI_Irecv(&value, 1, MPI_INT, 1, which, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    got[which] += value == i;
  }
  return NULL;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? argv[1] : "own";
  int provided = MPI_THREAD_SINGLE;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    printf("no MPI_THREAD_MULTIPLE\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int value = -1;
  if (rank == 0 && is("shared")) MPI_Irecv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &shared_request);
  const int which[2] = {0, 1};
  pthread_t second;
  pthread_create(&second, NULL, thread_main, (void*)&which[1]);
  thread_main((void*)&which[0]);
  pthread_join(second, NULL);
  if (rank == 0 && is("shared")) printf("shared request: received %d\n", value);
  if (rank == 0 && !is("shared")) printf("%s: %d and %d in order\n", mode, got[0], got[1]);
  MPI_Finalize();
  return 0;
}
