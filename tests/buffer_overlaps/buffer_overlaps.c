/* Buffers of pending operations used again by another operation. Two
 * ranks. argv[1], the erroneous uses (each on rank 1 but the RMA ones, on
 * rank 0):
 *   "irecv_irecv": two MPI_Irecv into the same ints before either is waited;
 *   "irecv_straddle": the same, the first across a 64 KiB boundary, the
 *     second after it, sharing 8 bytes;
 *   "irecv_long": the same, the first into 2 MiB, the second into its last
 *     32 bytes;
 *   "irecv_over_both": at 8 boundaries of 64 KiB, an MPI_Irecv over both a
 *     pending MPI_Isend's ints before the boundary and a pending MPI_Irecv's
 *     after it;
 *   "irecv_send": an MPI_Send from the ints a pending MPI_Irecv fills;
 *   "isend_recv": an MPI_Recv into the ints a pending MPI_Isend sends;
 *   "get_get": two MPI_Get into the same ints in one fence epoch;
 *   "get_put": an MPI_Put from the ints a pending MPI_Get fills;
 * and their correct twins:
 *   "isend_isend": two MPI_Isend from the same ints (MPI 3.0 allows it);
 *   "irecv_halves": two MPI_Irecv into the two halves of one array;
 *   "vectors": two MPI_Irecv into the even and the odd ints of one array
 *     (MPI_Type_vector), which interleave without sharing a byte;
 *   "send_after_wait": the MPI_Send of irecv_send after the MPI_Wait;
 *   "put_put": two MPI_Put from the same ints (to the two halves of the
 *     target's window: two puts to the same bytes in one epoch conflict);
 *   "put_after_fence": the MPI_Put of get_put in the next epoch.
 * Prints what the correct modes received on rank 0. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum { kCount = 8 };

static int failures = 0;

static void expect(int got, int wanted) {
  if (got != wanted) ++failures;
}

static int is(const char* mode, const char* name) { return strcmp(mode, name) == 0; }

/* Buffers whose bytes lie across 64 KiB boundaries, where the checker cuts
 * its tables of pending buffers. */
enum { kBoundaryInts = 65536 / sizeof(int), kWideInts = 32 * kBoundaryInts };
static int wide_space[kWideInts + 2 * kBoundaryInts];

/* The n-th 64 KiB boundary in wide_space (n < 32) past its first kCount
 * ints, wherever the loader put it. */
static int* boundary(int n) {
  const uintptr_t past = (uintptr_t)(wide_space + kCount);
  return (int*)((past + 65535) / 65536 * 65536) + n * kBoundaryInts;
}

/* Rank 0 sends two messages of kCount ints (tags 1 and 2) to rank 1, which
 * receives them as the mode says. */
static void two_receives(const char* mode, int rank) {
  int data[2 * kCount];
  for (int i = 0; i < 2 * kCount; ++i) data[i] = i;
  const int vectors = is(mode, "vectors");
  MPI_Datatype every_other = MPI_INT;
  if (vectors) {
    MPI_Type_vector(kCount, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
  }
  if (rank == 0) {
    MPI_Send(data, kCount, MPI_INT, 1, 1, MPI_COMM_WORLD);
    MPI_Send(data + kCount, kCount, MPI_INT, 1, 2, MPI_COMM_WORLD);
  } else {
    int got[2 * kCount];
    MPI_Request requests[2];
    const int halves = is(mode, "irecv_halves");
    int *first = got, *second = halves ? got + kCount : vectors ? got + 1 : got;
    int first_count = vectors ? 1 : kCount;
    if (is(mode, "irecv_straddle")) {
      first = boundary(0) - kCount / 2;
      second = boundary(0) + 2;
    } else if (is(mode, "irecv_long")) {
      first = boundary(0);
      first_count = kWideInts;
      second = first + kWideInts - kCount;
    }
    MPI_Irecv(first, first_count, every_other, 0, 1, MPI_COMM_WORLD, &requests[0]); /* mpisentry: first_irecv */
    MPI_Irecv(second, vectors ? 1 : kCount, every_other, 0, 2, MPI_COMM_WORLD, &requests[1]);
    MPI_Status statuses[2];
    MPI_Waitall(2, requests, statuses);
    for (int i = 0; i < kCount; ++i) {
      if (halves) expect(got[i] + got[kCount + i], 2 * i + kCount);
      if (vectors) expect(got[2 * i] + got[2 * i + 1], 2 * i + kCount);
    }
  }
  if (vectors) MPI_Type_free(&every_other);
}

/* Rank 1, on MPI_COMM_SELF, at 8 boundaries b: an MPI_Isend from the 4 ints
 * before b and an MPI_Irecv into the 4 ints from b + 4 are pending when an
 * MPI_Irecv takes the 16 ints from b - 8. It uses the bytes of both; the
 * checker names the pending write, whichever of its tables (cut at b) holds
 * either. */
static void over_both(int rank) {
  if (rank != 1) return;
  for (int n = 0; n < 8; ++n) {
    int* b = boundary(n);
    int other[4] = {1, 2, 3, 4};
    MPI_Request requests[4];
    MPI_Isend(b - 4, 4, MPI_INT, 0, 1, MPI_COMM_SELF, &requests[0]);
    MPI_Irecv(b + 4, 4, MPI_INT, 0, 2, MPI_COMM_SELF, &requests[1]); /* mpisentry: pending_irecv */
    MPI_Irecv(b - 8, 16, MPI_INT, 0, 1, MPI_COMM_SELF, &requests[2]);
    MPI_Isend(other, 4, MPI_INT, 0, 2, MPI_COMM_SELF, &requests[3]);
    MPI_Status statuses[4];
    MPI_Waitall(4, requests, statuses);
  }
}

/* Rank 0 sends kCount ints to rank 1 (tag 2) and receives kCount ints from
 * it (tag 1; isend_isend: and tag 3). Rank 1 uses one buffer for a pending
 * and another operation. */
static void pending_and_other(const char* mode, int rank) {
  int data[kCount];
  for (int i = 0; i < kCount; ++i) data[i] = rank * 100 + i;
  if (rank == 0) {
    int got[kCount];
    MPI_Send(data, kCount, MPI_INT, 1, 2, MPI_COMM_WORLD);
    MPI_Recv(got, kCount, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (is(mode, "send_after_wait"))
      for (int i = 0; i < kCount; ++i) expect(got[i], i); /* rank 1 sends on what it got */
    if (is(mode, "isend_isend")) {
      for (int i = 0; i < kCount; ++i) expect(got[i], 100 + i);
      MPI_Recv(got, kCount, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < kCount; ++i) expect(got[i], 100 + i);
    }
    return;
  }
  MPI_Request request, second = MPI_REQUEST_NULL;
  if (is(mode, "irecv_send") || is(mode, "send_after_wait")) {
    MPI_Irecv(data, kCount, MPI_INT, 0, 2, MPI_COMM_WORLD, &request); /* mpisentry: irecv */
    if (is(mode, "send_after_wait")) MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Send(data, kCount, MPI_INT, 0, 1, MPI_COMM_WORLD);
  } else {
    MPI_Isend(data, kCount, MPI_INT, 0, 1, MPI_COMM_WORLD, &request); /* mpisentry: isend */
    if (is(mode, "isend_isend")) MPI_Isend(data, kCount, MPI_INT, 0, 3, MPI_COMM_WORLD, &second);
    int own[kCount];
    MPI_Recv(is(mode, "isend_recv") ? data : own, kCount, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Wait(&second, MPI_STATUS_IGNORE);
}

/* Rank 0 reads from and writes to rank 1's window of kCount ints. */
static void one_sided(const char* mode, int rank) {
  int window_ints[kCount], local[kCount];
  for (int i = 0; i < kCount; ++i) {
    window_ints[i] = rank * 100 + i;
    local[i] = -1;
  }
  MPI_Win win;
  MPI_Win_create(window_ints, sizeof window_ints, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) {
    if (is(mode, "put_put")) {
      for (int i = 0; i < kCount; ++i) local[i] = i;
      MPI_Put(local, kCount / 2, MPI_INT, 1, 0, kCount / 2, MPI_INT, win);
      MPI_Put(local, kCount / 2, MPI_INT, 1, kCount / 2, kCount / 2, MPI_INT, win);
    } else {
      MPI_Get(local, kCount, MPI_INT, 1, 0, kCount, MPI_INT, win); /* mpisentry: get */
      if (is(mode, "get_get")) MPI_Get(local, kCount, MPI_INT, 1, 0, kCount, MPI_INT, win);
      if (is(mode, "put_after_fence")) MPI_Win_fence(0, win);
      if (!is(mode, "get_get")) MPI_Put(local, kCount, MPI_INT, 1, 0, kCount, MPI_INT, win);
    }
  } else if (is(mode, "put_after_fence")) {
    MPI_Win_fence(0, win);
  }
  MPI_Win_fence(0, win);
  if (rank == 1 && (is(mode, "put_put") || is(mode, "put_after_fence")))
    for (int i = 0; i < kCount; ++i) expect(window_ints[i], is(mode, "put_put") ? i % (kCount / 2) : 100 + i);
  MPI_Win_free(&win);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "irecv_halves";
  if (is(mode, "irecv_irecv") || is(mode, "irecv_straddle") || is(mode, "irecv_long") || is(mode, "irecv_halves") ||
      is(mode, "vectors"))
    two_receives(mode, rank);
  else if (is(mode, "irecv_over_both"))
    over_both(rank);
  else if (strncmp(mode, "get", 3) == 0 || strncmp(mode, "put", 3) == 0)
    one_sided(mode, rank);
  else
    pending_and_other(mode, rank);
  int all_failures = 0;
  MPI_Reduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("buffer_overlaps %s: %s\n", mode, all_failures == 0 ? "data as sent" : "data differs");
  MPI_Finalize();
  return 0;
}
