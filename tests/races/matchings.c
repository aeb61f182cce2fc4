/* Programs whose bug only another matching of a receive from MPI_ANY_SOURCE
 * shows, for --explore. The senders sleep before they send, so that a run
 * left alone takes the messages in one order, and passes. The first
 * argument picks one:
 *   hidden    rank 0 receives from MPI_ANY_SOURCE, then from rank 1. Rank 1
 *             sleeps 300 ms, rank 2 100 ms, so the first receive takes rank
 *             2's message. Had it taken rank 1's, the second would wait for
 *             good (a HARD deadlock: ranks 1 and 2 wait in MPI_Barrier).
 *   probe     the same with MPI_Probe from MPI_ANY_SOURCE first, then a
 *             receive from the rank it found.
 *   waitall   the same with MPI_Irecv from MPI_ANY_SOURCE, then from rank 1,
 *             both completed by one MPI_Waitall (the MPI Bugs Initiative's
 *             message-race codes around a collective).
 *   last      rank r sleeps r * 100 ms; rank 0 takes one message from each
 *             other rank from MPI_ANY_SOURCE; when the first it takes is the
 *             last rank's,
 *             it ends with exit status 3 (the bug behind 1 of k = size - 1
 *             matchings of that receive).
 *   sum       the same receives, and every order is right: rank 0 prints the
 *             sum.
 *   nested    two races in a row: rank 0 takes two messages from
 *             MPI_ANY_SOURCE, then ranks 1 and 2 each send it one more,
 *             which it takes from MPI_ANY_SOURCE too; it crashes (SIGSEGV)
 *             only when the first receive took rank 2's message and the
 *             third took rank 2's as well. 3 ranks.
 *   causal    rank 0 takes rank 1's message from MPI_ANY_SOURCE, then sends
 *             to rank 2, which answers with a message the first receive
 *             matches but can never take: it is sent because of it. Every
 *             run passes. 3 ranks. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size;

static void send_to_root(int value) { MPI_Send(&value, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); }

static int receive_any(MPI_Status* status) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, status); /* mpisentry: races */
  return value;
}

static void hidden(const char* how) {
  if (rank == 0) {
    int first = -1, value = 0;
    if (strcmp(how, "waitall") == 0) {
      int values[2];
      MPI_Request requests[2];
      MPI_Status statuses[2];
      MPI_Irecv(&values[0], 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &requests[0]); /* mpisentry: races */
      MPI_Irecv(&values[1], 1, MPI_INT, 1, 1, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitall(2, requests, statuses);
      first = statuses[0].MPI_SOURCE;
    } else {
      MPI_Status status;
      if (strcmp(how, "probe") == 0) {
        /* All ones, as a stack may leave it: MPI_Probe sets no cancelled bit. */
        memset(&status, 0xff, sizeof status);
        MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &status); /* mpisentry: races */
        MPI_Recv(&value, 1, MPI_INT, status.MPI_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        receive_any(&status);
      }
      first = status.MPI_SOURCE;
      MPI_Recv(&value, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    printf("first from %d\n", first);
  } else if (rank <= 2) {
    usleep(rank == 1 ? 300000 : 100000);
    send_to_root(rank);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

static void from_each(int bug_when_last_first) {
  if (rank == 0) {
    int sum = 0;
    for (int i = 1; i < size; ++i) {
      MPI_Status status;
      sum += receive_any(&status);
      if (i == 1 && bug_when_last_first && status.MPI_SOURCE == size - 1) {
        fprintf(stderr, "the last rank came first\n");
        exit(3);
      }
    }
    printf("sum %d\n", sum);
  } else {
    usleep((useconds_t)rank * 100000);
    send_to_root(rank);
  }
}

static void nested(void) {
  if (rank == 0) {
    MPI_Status first, second, third;
    receive_any(&first);
    receive_any(&second);
    receive_any(&third);
    receive_any(&second);
    if (first.MPI_SOURCE == 2 && third.MPI_SOURCE == 2) raise(SIGSEGV);
    printf("orders %d %d\n", first.MPI_SOURCE, third.MPI_SOURCE);
  } else if (rank <= 2) {
    usleep(rank == 1 ? 100000 : 300000);  /* rank 1's at 100 ms, rank 2's at 300 */
    send_to_root(rank);
    usleep(400000);  /* at 500 and 700 ms */
    send_to_root(rank);
  }
}

static void causal(void) {
  int value = 0;
  if (rank == 0) {
    MPI_Status status;
    receive_any(&status);
    MPI_Send(&value, 1, MPI_INT, 2, 2, MPI_COMM_WORLD);
    MPI_Recv(&value, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("first from %d\n", status.MPI_SOURCE);
  } else if (rank == 1) {
    send_to_root(rank);
  } else if (rank == 2) {
    MPI_Recv(&value, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    send_to_root(rank);
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "hidden") == 0 || strcmp(mode, "probe") == 0 || strcmp(mode, "waitall") == 0) {
    hidden(mode);
  } else if (strcmp(mode, "last") == 0) {
    from_each(1);
  } else if (strcmp(mode, "sum") == 0) {
    from_each(0);
  } else if (strcmp(mode, "nested") == 0) {
    nested();
  } else if (strcmp(mode, "causal") == 0) {
    causal();
  } else {
    if (rank == 0) fprintf(stderr, "usage: matchings hidden|probe|waitall|last|sum|nested|causal\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return 0;
}
