/* Partitioned communication between ranks 0 (the sender) and 1: a send of
 * kPartitions partitions of two ints. argv[1], the case:
 *   ready: rank 0 readies each partition once with MPI_Pready; rank 1 asks
 *     MPI_Parrived of each once it completed (correct);
 *   range: MPI_Pready_range on partitions 0 to 1, then 2 to 3 (correct);
 *   list: MPI_Pready_list of {3, 1, 0, 2} (correct);
 *   rounds: three starts of the same requests, each partition readied once
 *     per start (correct);
 *   double: MPI_Pready on partition 2 twice (then 3): DOUBLE_READY;
 *   range_double: MPI_Pready_range 0 to 2, then 2 to 3: DOUBLE_READY;
 *   list_double: MPI_Pready_list of {0, 1, 1}, then 2 and 3: DOUBLE_READY;
 *   invalid: MPI_Pready on partition kPartitions (then the last): INVALID;
 *   arrived_invalid: MPI_Parrived on partition -1 before the wait: INVALID;
 *   inactive: MPI_Pready on partition 0 before MPI_Start: INACTIVE;
 *   wildcard: MPI_Precv_init from MPI_ANY_SOURCE: WILDCARD (MPICH then
 *     aborts the job in the call);
 *   filled: three starts, each partition written just before it is readied
 *     (correct: a partition is the program's until readied);
 *   written: the buffer written after its last partition was readied,
 *     before the wait: LOCAL:MEMORY:ILLEGAL_MODIFICATION;
 *   repartitioned: rank 0 sends each partition as one contiguous type of
 *     its ints, and rank 1 receives them in twice as many partitions, half
 *     as large (correct: MPI matches the whole buffers' type signatures).
 * Rank 1 prints what it received. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kPartitions = 4, kPer = 2 };

static int is(const char* mode, const char* name) { return strcmp(mode, name) == 0; }

static void ready_all(const char* mode, MPI_Request request, int* data, int round) {
  if (is(mode, "range") || is(mode, "range_double")) {
    MPI_Pready_range(0, is(mode, "range") ? 1 : 2, request); /* mpisentry: range_first */
    MPI_Pready_range(2, 3, request); /* mpisentry: range_second */
  } else if (is(mode, "list") || is(mode, "list_double")) {
    int all[kPartitions] = {3, 1, 0, 2}, twice[3] = {0, 1, 1}, rest[2] = {2, 3};
    if (is(mode, "list")) {
      MPI_Pready_list(kPartitions, all, request);
    } else {
      MPI_Pready_list(3, twice, request); /* mpisentry: list_twice */
      MPI_Pready_list(2, rest, request);
    }
  } else {
    for (int p = 0; p < kPartitions; ++p) {
      if (is(mode, "filled"))
        for (int i = p * kPer; i < (p + 1) * kPer; ++i) data[i] = 100 * round + i;
      if (is(mode, "double") && p == 3) MPI_Pready(2, request); /* mpisentry: ready_twice */
      if (is(mode, "invalid") && p == 3) MPI_Pready(kPartitions, request); /* mpisentry: ready_outside */
      MPI_Pready(p, request);
    }
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "ready";
  int data[kPartitions * kPer];
  for (int i = 0; i < kPartitions * kPer; ++i) data[i] = rank == 0 ? i + 1 : 0;
  MPI_Request request = MPI_REQUEST_NULL;
  int sum = 0;
  const int rounds = is(mode, "rounds") || is(mode, "filled") ? 3 : 1;
  if (rank == 0) {
    MPI_Datatype partition = MPI_INT;
    if (is(mode, "repartitioned")) {
      MPI_Type_contiguous(kPer, MPI_INT, &partition);
      MPI_Type_commit(&partition);
    }
    const int per = is(mode, "repartitioned") ? 1 : kPer;
    MPI_Psend_init(data, kPartitions, per, partition, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &request); /* mpisentry: psend */
    if (is(mode, "inactive")) MPI_Pready(0, request); /* mpisentry: ready_inactive */
    for (int round = 0; round < rounds; ++round) {
      MPI_Start(&request);
      ready_all(mode, request, data, round);
      if (is(mode, "written")) data[1] = -1;
      MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: send_wait */
    }
    if (partition != MPI_INT) MPI_Type_free(&partition);
  } else if (rank == 1) {
    const int source = is(mode, "wildcard") ? MPI_ANY_SOURCE : 0;
    const int parts = is(mode, "repartitioned") ? 2 * kPartitions : kPartitions;
    MPI_Precv_init(data, parts, kPartitions * kPer / parts, MPI_INT, source, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &request); /* mpisentry: precv */
    for (int round = 0; round < rounds; ++round) {
      MPI_Start(&request);
      int flag = 0;
      if (is(mode, "arrived_invalid")) MPI_Parrived(request, -1, &flag); /* mpisentry: arrived_outside */
      MPI_Wait(&request, MPI_STATUS_IGNORE);
      for (int i = 0; i < kPartitions * kPer; ++i) sum += data[i];
    }
  }
  if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
  if (rank == 1 && !is(mode, "written")) printf("partitions %s: received %d\n", mode, sum);
  MPI_Finalize();
  return 0;
}
