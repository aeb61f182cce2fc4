/* Hangs that only MPI's matching rules prove, and their correct twins.
 * argv[1] is how long one rank computes first (the twins), argv[2] the shape
 * and argv[3] whether the program is "correct" or has the "bug":
 *   mixed_collective (2 ranks): bug: rank 0 calls MPI_Allgather, rank 1
 *     MPI_Iallgather and waits on it; MPI never matches a blocking
 *     collective with a nonblocking one. Correct: both call MPI_Iallgather,
 *     rank 0 after computing.
 *   root_returns (2 ranks): bug: rank 0, the root, returns at once from
 *     MPI_Bcast and waits in MPI_Barrier; rank 1 waits on MPI_Ibcast, which
 *     MPI never matches with the root's MPI_Bcast. Correct: both call
 *     MPI_Ibcast, rank 0 after computing.
 *   late_ibarrier (3 ranks): bug: ranks 0 and 1 wait on MPI_Ibarrier while
 *     rank 2 waits in MPI_Recv for rank 0, which sends only after its
 *     barrier. Correct: rank 2 computes, joins the barrier, then receives.
 *   sendrecv_tags (2 ranks): bug: rank 0's MPI_Sendrecv sends 1 MiB with
 *     tag 1 and receives tag 2; rank 1's sends tag 2 and receives tag 3:
 *     rank 1's send half is taken, rank 0's never is. Correct: rank 1
 *     computes, then receives tag 1.
 *   partition_wait (2 ranks): bug: rank 0 starts a partitioned send of
 *     kPartitions partitions to rank 1, readies all but the last and waits
 *     on it; rank 1 waits on its partitioned receive. Correct: rank 0
 *     computes, then readies the last partition before its wait.
 *   partition_waitall (2 ranks): bug: the same, rank 0 waiting in
 *     MPI_Waitall on the partitioned send and a receive that rank 1's
 *     MPI_Send completes. Correct: rank 0 computes and readies the last.
 *   partition_recv_first (2 ranks): bug: rank 0 readies all partitions but
 *     the last, then receives from rank 1, which waits on its partitioned
 *     receive before sending: no message is under way, as the partitioned
 *     send's goes only with its last partition. Correct: rank 1 computes,
 *     sends, then waits. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

enum Shape {
  kMixedCollective,
  kRootReturns,
  kLateIbarrier,
  kSendrecvTags,
  kPartitionWait,
  kPartitionWaitall,
  kPartitionRecvFirst,
  kShapeCount
};
static const char* const kShapes[] = {"mixed_collective", "root_returns",      "late_ibarrier",       "sendrecv_tags",
                                      "partition_wait",   "partition_waitall", "partition_recv_first"};
static const char* const kCorrectness[] = {"correct", "bug"};

enum { kLargeCount = 131072 /* doubles: 1 MiB, past the eager limit */, kPartitions = 4 };

static void gather_blocking(int* mine, int* all) {
  MPI_Allgather(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD); /* mpisentry: blocks [mixed_collective] */
}

static void gather_nonblocking(int* mine, int* all) {
  MPI_Request request;
  MPI_Iallgather(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks [mixed_collective] */
}

static void mixed_collective(int rank, int bug, double compute_seconds) {
  int mine = rank + 1, all[2] = {0, 0};
  if (bug && rank == 0) {
    gather_blocking(&mine, all);
  } else {
    if (rank == 0) compute_for(compute_seconds);
    gather_nonblocking(&mine, all);
  }
  if (rank == 0) printf("gathered %d %d\n", all[0], all[1]);
}

static void synchronize(void) {
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks [root_returns] */
}

static void broadcast_nonblocking(int* value) {
  MPI_Request request;
  MPI_Ibcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks [root_returns] */
}

static void root_returns(int rank, int bug, double compute_seconds) {
  int value = rank == 0 ? 42 : 0;
  if (bug && rank == 0) {
    MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    if (rank == 0) compute_for(compute_seconds);
    broadcast_nonblocking(&value);
  }
  synchronize();
  if (rank == 1) printf("broadcast %d\n", value);
}

static void ibarrier_then_wait(void) {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks [late_ibarrier] */
}

static int wait_for_rank_0(void) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks [late_ibarrier] */
  return value;
}

static void late_ibarrier(int rank, int bug, double compute_seconds) {
  if (rank < 2) {
    ibarrier_then_wait();
    const int value = 42;
    if (rank == 0) MPI_Send(&value, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
    return;
  }
  if (bug) {
    const int value = wait_for_rank_0();
    ibarrier_then_wait();
    printf("received %d\n", value);
  } else {
    compute_for(compute_seconds);
    ibarrier_then_wait();
    printf("received %d\n", wait_for_rank_0());
  }
}

static void exchange(double* send, int send_tag, double* receive, int receive_tag) {
  const int other = 1;
  MPI_Sendrecv(send, kLargeCount, MPI_DOUBLE, other, send_tag, /* mpisentry: blocks [sendrecv_tags] */
               receive, kLargeCount, MPI_DOUBLE, other, receive_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void answer(double* send, int send_tag, double* receive, int receive_tag) {
  const int other = 0;
  MPI_Sendrecv(send, 1, MPI_DOUBLE, other, send_tag, /* mpisentry: blocks [sendrecv_tags] */
               receive, kLargeCount, MPI_DOUBLE, other, receive_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void sendrecv_tags(int rank, int bug, double compute_seconds) {
  double* send = calloc(kLargeCount, sizeof(double));
  double* receive = calloc(kLargeCount, sizeof(double));
  for (int i = 0; i < kLargeCount; ++i) send[i] = rank + 1;
  if (rank == 0) {
    exchange(send, 1, receive, 2);
    printf("received %.0f\n", receive[0]);
  } else {
    if (!bug) compute_for(compute_seconds);
    answer(send, 2, receive, bug ? 3 : 1);
  }
  free(receive);
  free(send);
}

static void send_partitions(MPI_Request* request) {
  MPI_Wait(request, MPI_STATUS_IGNORE); /* mpisentry: blocks [partition_wait] */
}

static void receive_partitions(MPI_Request* request) {
  MPI_Wait(request, MPI_STATUS_IGNORE); /* mpisentry: blocks [partition_wait] */
}

static void send_partitions_and_receive(MPI_Request requests[2]) {
  MPI_Waitall(2, requests, MPI_STATUSES_IGNORE); /* mpisentry: blocks [partition_waitall] */
}

static void receive_partitions_after_send(MPI_Request* request) {
  MPI_Wait(request, MPI_STATUS_IGNORE); /* mpisentry: blocks [partition_waitall] */
}

static void receive_before_last_partition(int* value) {
  MPI_Recv(value, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks [partition_recv_first] */
}

static void receive_partitions_first(MPI_Request* request) {
  MPI_Wait(request, MPI_STATUS_IGNORE); /* mpisentry: blocks [partition_recv_first] */
}

/* Rank 0 sends kPartitions partitions of two ints to rank 1 (tag 7); rank 1
 * answers with one int (tag 8) where the shape has it. */
static void partitioned(enum Shape shape, int rank, int bug, double compute_seconds) {
  int data[kPartitions * 2], value = rank + 1;
  for (int i = 0; i < kPartitions * 2; ++i) data[i] = rank == 0 ? i + 1 : 0;
  MPI_Request requests[2];
  if (rank == 0) {
    MPI_Psend_init(data, kPartitions, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]);
    MPI_Start(&requests[0]);
    MPI_Pready_range(0, kPartitions - 2, requests[0]);
    if (shape == kPartitionRecvFirst) {
      receive_before_last_partition(&value);
      MPI_Pready(kPartitions - 1, requests[0]);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    } else {
      if (shape == kPartitionWaitall) MPI_Irecv(&value, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &requests[1]);
      if (!bug) {
        compute_for(compute_seconds);
        MPI_Pready(kPartitions - 1, requests[0]);
      }
      if (shape == kPartitionWaitall)
        send_partitions_and_receive(requests);
      else
        send_partitions(&requests[0]);
    }
    printf("answered %d\n", value);
  } else {
    MPI_Precv_init(data, kPartitions, 2, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &requests[0]);
    MPI_Start(&requests[0]);
    if (shape == kPartitionWaitall) {
      MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
      receive_partitions_after_send(&requests[0]);
    } else if (shape == kPartitionRecvFirst && !bug) {
      compute_for(compute_seconds);
      MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
      MPI_Wait(&requests[0], MPI_STATUS_IGNORE);
    } else if (shape == kPartitionRecvFirst) {
      receive_partitions_first(&requests[0]);
      MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    } else {
      receive_partitions(&requests[0]);
    }
  }
  MPI_Request_free(&requests[0]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const double compute_seconds = seconds_argument(argc, argv, 1, "how long one rank computes first");
  const enum Shape shape = variant_argument(argc, argv, 2, "the shape", kShapes, kShapeCount);
  const int bug = variant_argument(argc, argv, 3, "correct or bug", kCorrectness, 2);
  const int ranks = shape == kLateIbarrier ? 3 : 2;
  const int rank = world_rank_checked(ranks, ranks);
  if (shape == kMixedCollective)
    mixed_collective(rank, bug, compute_seconds);
  else if (shape == kRootReturns)
    root_returns(rank, bug, compute_seconds);
  else if (shape == kLateIbarrier)
    late_ibarrier(rank, bug, compute_seconds);
  else if (shape == kSendrecvTags)
    sendrecv_tags(rank, bug, compute_seconds);
  else
    partitioned(shape, rank, bug, compute_seconds);
  MPI_Finalize();
  return 0;
}
