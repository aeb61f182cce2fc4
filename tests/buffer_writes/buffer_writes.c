/* Send buffers written, or only read, while MPI owns them. Two ranks; rank
 * 0 sends to rank 1 (or puts into its window), which checks what it got.
 * argv[1]:
 *   "isend_write": rank 0 writes its MPI_Isend buffer before the MPI_Wait;
 *   "isend_write_large": the same with 4 KiB sent, the last int written
 *     (a checksum past a kilobyte takes another path);
 *   "persistent_write": the same between MPI_Start and MPI_Wait of an
 *     MPI_Send_init request;
 *   "iallgather_write": every rank writes its MPI_Iallgather send buffer
 *     before the MPI_Wait;
 *   "ialltoall_write": every rank writes the last block of its MPI_Ialltoall
 *     send buffer (the one for the last rank) before the MPI_Wait;
 *   "vector_write": rank 0 sends every other int (MPI_Type_vector) and
 *     writes one of them before the MPI_Wait;
 *   "put_write": rank 0 writes the origin buffer of an MPI_Put before the
 *     MPI_Win_fence that completes it;
 *   "irecv_write": rank 1 writes its MPI_Irecv buffer after the message came
 *     (rank 0 sent it before a barrier both then enter) and before the
 *     MPI_Wait;
 * and their correct twins:
 *   "write_after": rank 0 writes the buffer only after the MPI_Wait;
 *   "read_only": rank 0 reads its MPI_Isend buffer before the MPI_Wait, which
 *     MPI allows since 3.0;
 *   "vector_gap_write": rank 0 writes an int between those the vector sends;
 *   "freed_type": rank 0 frees the vector type before the MPI_Wait (MPI
 *     allows it);
 *   "iallgather": every rank leaves its MPI_Iallgather send buffer alone;
 *   "ialltoall": every rank leaves its MPI_Ialltoall send buffer alone;
 *   "put_read": rank 0 reads the origin buffer of its MPI_Put before the
 *     MPI_Win_fence, and writes it after;
 *   "irecv": rank 1 leaves its MPI_Irecv buffer alone until the MPI_Wait;
 *   "irecv_gap_write": rank 1 receives every other int (MPI_Type_vector)
 *     and writes an int between them before the MPI_Wait;
 *   "irecv_short": rank 1 posts room for twice the ints rank 0 sends;
 *   "irecv_replace": rank 0 sends with MPI_Sendrecv_replace, whose buffer
 *     then holds what rank 1 sent back.
 * The erroneous modes leave the receiver's data undefined: it is not checked. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { kCount = 8, kLargeCount = 1024 };

static int failures = 0;

static void expect(int got, int wanted) {
  if (got != wanted) ++failures;
}

static void exchange(const char* mode, int rank) {
  int data[2 * kLargeCount];
  for (int i = 0; i < 2 * kLargeCount; ++i) data[i] = rank == 0 ? i : -1;
  const int vector = strncmp(mode, "vector", 6) == 0 || strcmp(mode, "freed_type") == 0;
  const int large = strcmp(mode, "isend_write_large") == 0;
  const int sent = large ? kLargeCount : kCount;
  MPI_Datatype every_other = MPI_INT;
  if (vector) {
    MPI_Type_vector(kCount, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
  }
  const int count = vector ? 1 : sent;
  if (rank == 1) {
    int got[kLargeCount];
    MPI_Recv(got, sent, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (strstr(mode, "_write") == NULL || strcmp(mode, "vector_gap_write") == 0)
      for (int i = 0; i < kCount; ++i) expect(got[i], vector ? 2 * i : i);
  } else if (rank == 0 && strcmp(mode, "persistent_write") == 0) {
    MPI_Request request;
    MPI_Send_init(data, count, every_other, 1, 5, MPI_COMM_WORLD, &request); /* mpisentry: send_init */
    MPI_Start(&request);
    data[3] = 99;
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Request_free(&request);
  } else if (rank == 0) {
    MPI_Request request;
    MPI_Isend(data, count, every_other, 1, 5, MPI_COMM_WORLD, &request); /* mpisentry: isend */
    int sum = 0;
    if (strcmp(mode, "isend_write") == 0) data[3] = 99;
    if (large) data[kLargeCount - 1] = 99;
    if (strcmp(mode, "vector_write") == 0) data[4] = 99;      /* the third int sent */
    if (strcmp(mode, "vector_gap_write") == 0) data[5] = 99;  /* not sent */
    if (strcmp(mode, "read_only") == 0)
      for (int i = 0; i < kCount; ++i) sum += data[i];
    if (strcmp(mode, "freed_type") == 0) MPI_Type_free(&every_other);
    MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: wait */
    if (strcmp(mode, "write_after") == 0) data[3] = 99;
    if (strcmp(mode, "read_only") == 0) expect(sum, kCount * (kCount - 1) / 2);
  }
  if (vector && !(rank == 0 && strcmp(mode, "freed_type") == 0)) MPI_Type_free(&every_other);
}

static void receive(const char* mode, int rank) {
  int data[2 * kCount];
  for (int i = 0; i < 2 * kCount; ++i) data[i] = rank == 0 ? i : -1;
  const int vector = strcmp(mode, "irecv_gap_write") == 0, twice = strcmp(mode, "irecv_short") == 0;
  MPI_Datatype every_other = MPI_INT;
  if (vector) {
    MPI_Type_vector(kCount, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
  }
  const int replace = strcmp(mode, "irecv_replace") == 0;
  if (rank == 0 && replace) {
    MPI_Sendrecv_replace(data, kCount, MPI_INT, 1, 6, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < kCount; ++i) expect(data[i], 100 + i);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Send(data, kCount, MPI_INT, 1, 6, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Request request;
    const int count = vector ? 1 : twice ? 2 * kCount : kCount;
    MPI_Irecv(data, count, every_other, 0, 6, MPI_COMM_WORLD, &request); /* mpisentry: irecv */
    if (replace) {
      int back[kCount];
      for (int i = 0; i < kCount; ++i) back[i] = 100 + i;
      MPI_Send(back, kCount, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (strcmp(mode, "irecv_write") == 0) data[3] = 99;
    if (vector) data[5] = 99; /* not received into */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    if (strcmp(mode, "irecv_write") != 0)
      for (int i = 0; i < kCount; ++i) expect(data[vector ? 2 * i : i], i);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
  }
  if (vector) MPI_Type_free(&every_other);
}

static void iallgather(const char* mode, int rank, int size) {
  int mine = rank + 1, all[64];
  MPI_Request request;
  MPI_Iallgather(&mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &request); /* mpisentry: iallgather */
  if (strcmp(mode, "iallgather_write") == 0) mine++;
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (strcmp(mode, "iallgather_write") != 0)
    for (int i = 0; i < size && i < 64; ++i) expect(all[i], i + 1);
}

static void ialltoall(const char* mode, int rank, int size) {
  int mine[64], all[64];
  for (int i = 0; i < size && i < 64; ++i) mine[i] = rank * 100 + i;
  MPI_Request request;
  MPI_Ialltoall(mine, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD, &request); /* mpisentry: ialltoall */
  if (strcmp(mode, "ialltoall_write") == 0) mine[size - 1]++;
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (strcmp(mode, "ialltoall_write") != 0)
    for (int i = 0; i < size && i < 64; ++i) expect(all[i], i * 100 + rank);
}

static void put(const char* mode, int rank) {
  int window_ints[kCount], local[kCount];
  for (int i = 0; i < kCount; ++i) {
    window_ints[i] = -1;
    local[i] = i;
  }
  MPI_Win win;
  MPI_Win_create(window_ints, sizeof window_ints, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  int sum = 0;
  if (rank == 0) {
    MPI_Put(local, kCount, MPI_INT, 1, 0, kCount, MPI_INT, win); /* mpisentry: put */
    if (strcmp(mode, "put_write") == 0) local[3] = 99;
    if (strcmp(mode, "put_read") == 0)
      for (int i = 0; i < kCount; ++i) sum += local[i];
  }
  MPI_Win_fence(0, win);
  if (rank == 0 && strcmp(mode, "put_read") == 0) {
    local[3] = 99;
    expect(sum, kCount * (kCount - 1) / 2);
  }
  if (rank == 1 && strcmp(mode, "put_read") == 0)
    for (int i = 0; i < kCount; ++i) expect(window_ints[i], i);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "write_after";
  if (strncmp(mode, "iallgather", 10) == 0)
    iallgather(mode, rank, size);
  else if (strncmp(mode, "ialltoall", 9) == 0)
    ialltoall(mode, rank, size);
  else if (strncmp(mode, "irecv", 5) == 0)
    receive(mode, rank);
  else if (strncmp(mode, "put", 3) == 0)
    put(mode, rank);
  else
    exchange(mode, rank);
  int all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("buffer_writes %s: %s\n", mode, all_failures == 0 ? "data as sent" : "data differs");
  MPI_Finalize();
  return 0;
}
