/* One-sided accesses to rank 1's window of kInts ints in epochs other than
 * fences, from ranks 0 and 2 (three ranks). argv[1] names the case; each
 * racy case has a correct twin, listed after it:
 *   shared_put_put: both put ints 2 to 5 under MPI_LOCK_SHARED, and meet
 *     (MPI_Sendrecv) before unlocking, so that their epochs overlap in time
 *   | shared_halves: the same, rank 0 on ints 0 to 7, rank 2 on 8 to 15
 *   lock_all_put_get: rank 0 puts, rank 2 gets, under MPI_Win_lock_all, meeting
 *   | lock_all_barrier: the put's epoch, an MPI_Barrier, then the get's
 *   acc_put: rank 0 accumulates (MPI_SUM), rank 2 puts, shared locks, meeting
 *   | acc_acc: both accumulate with MPI_SUM
 *   acc_ops: rank 0 accumulates with MPI_SUM, rank 2 with MPI_MAX
 *   | acc_no_op: rank 2 reads with MPI_Get_accumulate and MPI_NO_OP
 *   acc_types: both MPI_SUM, rank 0 as MPI_INT, rank 2 as MPI_UNSIGNED
 *   | acc_same_type: both as MPI_INT
 *   fetch_put: rank 0 MPI_Fetch_and_op (MPI_SUM), rank 2 puts
 *   | fetch_fetch: both MPI_Fetch_and_op (MPI_SUM)
 *   swap_put: rank 0 MPI_Compare_and_swap, rank 2 puts
 *   | swap_swap: both MPI_Compare_and_swap
 *   get_acc_put: rank 0 MPI_Get_accumulate with MPI_NO_OP, rank 2 puts
 *   | get_get_acc: rank 0 MPI_Get_accumulate with MPI_NO_OP, rank 2 gets
 *   rput_rput: both MPI_Rput ints 2 to 5 under MPI_Win_lock_all (MPI_Wait
 *     on each), meeting
 *   | rput_halves: MPI_Rput on disjoint halves
 *   rget_put: rank 0 MPI_Rget, rank 2 puts, meeting
 *   | rget_rget: both MPI_Rget
 *   pscw_put_put: rank 1 exposes its window to ranks 0 and 2 at once
 *     (MPI_Win_post ... MPI_Win_wait); both put ints 2 to 5 (MPI_Win_start
 *     ... MPI_Win_complete)
 *   | pscw_epochs: rank 1 exposes its window to rank 0, then to rank 2
 *   pscw_put_get: one exposure, rank 0 puts, rank 2 gets
 *   | pscw_get_get: one exposure, both get
 *   pscw_own: one exposure to rank 0, which puts ints 2 to 5, while rank 1
 *     gets rank 2's ints into its own ints 2 to 5 under a lock; the two meet
 *   | pscw_own_apart: rank 1 gets into its ints 8 to 11
 *   same_origin: rank 0 puts ints 2 to 5 twice in one lock epoch
 *   | flushed: rank 0 puts them, MPI_Win_flush, puts them again
 *   threads: two threads of rank 0 put ints 2 to 5 in one MPI_Win_lock_all
 *     epoch (MPI_THREAD_MULTIPLE)
 *   | thread_halves: the two threads put disjoint halves
 *   lock_own: rank 0 puts ints 2 to 5 under a shared lock while rank 1 gets
 *     rank 2's ints into its own ints 2 to 5 under a lock, meeting
 *   | lock_own_apart: rank 1 gets into its ints 8 to 11
 * Rank 0 prints what rank 1's window ended with in the correct cases whose
 * outcome does not depend on timing. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { kInts = 16, kPart = 4 };

static const char* mode;
static int rank;
static MPI_Win win;
static int mine[kInts], got[kInts], old[kInts];

static int is(const char* name) { return strcmp(mode, name) == 0; }
static int origin(void) { return rank == 0 || rank == 2; }


/* This rank and `peer` meet, each in its epoch. */
static void meet_rank(int peer) {
  int token = rank, other;
  MPI_Sendrecv(&token, 1, MPI_INT, peer, 0, &other, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void* put_part(void* first) {
  MPI_Put(mine, kPart, MPI_INT, 1, *(int*)first, kPart, MPI_INT, win);
  return NULL;
}

/* Each origin's call in one shared lock epoch (or lock_all), meeting in it. */
static void shared_epoch(int lock_all, void (*call)(void)) {
  if (!origin()) return;
  if (lock_all)
    MPI_Win_lock_all(0, win);
  else
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
  call();
  meet_rank(2 - rank);
  if (lock_all)
    MPI_Win_unlock_all(win);
  else
    MPI_Win_unlock(1, win);
}

static void put_put(void) { MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: put_put_call */ }
static void halves(void) { MPI_Put(mine, kInts / 2, MPI_INT, 1, rank == 2 ? kInts / 2 : 0, kInts / 2, MPI_INT, win); }
static void put_get(void) {
  if (rank == 0)
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: put_get_put */
  else
    MPI_Get(got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
}
static void acc_put(void) {
  if (rank == 0)
    MPI_Accumulate(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_SUM, win); /* mpisentry: acc_put_acc */
  else
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
}
static void acc_acc(void) { MPI_Accumulate(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_SUM, win); }
static void acc_ops(void) {
  MPI_Accumulate(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, win); /* mpisentry: acc_ops_acc */
}
static void acc_no_op(void) {
  if (rank == 0)
    MPI_Accumulate(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_SUM, win);
  else
    MPI_Get_accumulate(NULL, 0, MPI_INT, got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_NO_OP, win);
}
static void acc_types(void) {
  const MPI_Datatype type = rank == 0 || is("acc_same_type") ? MPI_INT : MPI_UNSIGNED;
  MPI_Accumulate(mine, kPart, type, 1, 2, kPart, type, MPI_SUM, win); /* mpisentry: acc_types_acc */
}
static void fetch_put(void) {
  if (rank == 0 || is("fetch_fetch"))
    MPI_Fetch_and_op(mine, old, MPI_INT, 1, 3, MPI_SUM, win); /* mpisentry: fetch */
  else
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
}
static void swap_put(void) {
  if (rank == 0 || is("swap_swap"))
    MPI_Compare_and_swap(mine, got, old, MPI_INT, 1, 3, win); /* mpisentry: swap */
  else
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
}
static void get_acc_put(void) {
  if (rank == 0)
    MPI_Get_accumulate(NULL, 0, MPI_INT, got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, MPI_NO_OP, win); /* mpisentry: get_acc */
  else if (is("get_acc_put"))
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
  else
    MPI_Get(old, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
}
static void rput_rput(void) {
  MPI_Request request;
  const int first = is("rput_halves") && rank == 2 ? kInts / 2 : 2;
  MPI_Rput(mine, kPart, MPI_INT, 1, first, kPart, MPI_INT, win, &request); /* mpisentry: rput */
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}
static void rget_put(void) {
  MPI_Request request;
  if (rank == 0 || is("rget_rget")) {
    MPI_Rget(got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win, &request); /* mpisentry: rget */
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
  }
}

/* Rank 1 exposes its window to `first` and `second` (one exposure when
 * `together`); ranks 0 and 2 each run `call` in an access epoch to it. */
static void pscw(int together, void (*call)(void)) {
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (rank == 1) {
    int both[2] = {0, 2};
    for (int i = 0; i < (together ? 1 : 2); ++i) {
      MPI_Group_incl(world, together ? 2 : 1, together ? both : &both[i], &group);
      MPI_Win_post(group, 0, win);
      MPI_Win_wait(win);
      MPI_Group_free(&group);
    }
  } else if (origin()) {
    int target = 1;
    MPI_Group_incl(world, 1, &target, &group);
    MPI_Win_start(group, 0, win);
    call();
    MPI_Win_complete(win);
    MPI_Group_free(&group);
  }
  MPI_Group_free(&world);
}

static void get_get(void) { MPI_Get(got, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); }

/* Rank 1 gets rank 2's ints into its own window memory (ints 2 to 5 or 8 to
 * 11) under a lock, and meets rank 0 in it, while rank 0 puts ints 2 to 5. */
static int* window_ints;
static void own_get(int apart) {
  MPI_Win_lock(MPI_LOCK_SHARED, 2, 0, win);
  MPI_Get(window_ints + (apart ? 8 : 2), kPart, MPI_INT, 2, 0, kPart, MPI_INT, win); /* mpisentry: own_get */
  meet_rank(0);
  MPI_Win_unlock(2, win);
}

static void pscw_own(int apart) {
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int peer = rank == 1 ? 0 : 1;
  MPI_Group_incl(world, 1, &peer, &group);
  if (rank == 1) {
    MPI_Win_post(group, 0, win);
    own_get(apart);
    MPI_Win_wait(win);
  } else if (rank == 0) {
    MPI_Win_start(group, 0, win);
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: pscw_own_put */
    meet_rank(1);
    MPI_Win_complete(win);
  }
  MPI_Group_free(&group);
  MPI_Group_free(&world);
}

/* Rank 0 and rank 1 meet while rank 0 holds its lock and rank 1 gets. */
static void lock_own(int apart) {
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: lock_own_put */
    meet_rank(1);
    MPI_Win_unlock(1, win);
  } else if (rank == 1) {
    own_get(apart);
  }
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mode = argc > 1 ? argv[1] : "shared_halves";
  int ints[kInts];
  window_ints = ints;
  for (int i = 0; i < kInts; ++i) {
    ints[i] = rank * 100 + i;
    mine[i] = rank * 1000 + i;
    got[i] = old[i] = -1;
  }
  MPI_Win_create(ints, sizeof ints, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  int deterministic = 1;
  if (is("shared_put_put")) {
    shared_epoch(0, put_put);
  } else if (is("shared_halves")) {
    shared_epoch(0, halves);
  } else if (is("lock_all_put_get")) {
    shared_epoch(1, put_get);
  } else if (is("lock_all_barrier")) {
    if (rank == 0) {
      MPI_Win_lock_all(0, win);
      put_get();
      MPI_Win_unlock_all(win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 2) {
      MPI_Win_lock_all(0, win);
      put_get();
      MPI_Win_unlock_all(win);
    }
  } else if (is("acc_put")) {
    shared_epoch(0, acc_put);
  } else if (is("acc_acc")) {
    shared_epoch(0, acc_acc);
  } else if (is("acc_ops")) {
    shared_epoch(0, acc_ops);
  } else if (is("acc_no_op")) {
    shared_epoch(0, acc_no_op);
  } else if (is("acc_types") || is("acc_same_type")) {
    shared_epoch(0, acc_types);
  } else if (is("fetch_put") || is("fetch_fetch")) {
    shared_epoch(0, fetch_put);
  } else if (is("swap_put") || is("swap_swap")) {
    shared_epoch(0, swap_put);
    deterministic = 0;
  } else if (is("get_acc_put") || is("get_get_acc")) {
    shared_epoch(0, get_acc_put);
  } else if (is("rput_rput") || is("rput_halves")) {
    shared_epoch(1, rput_rput);
  } else if (is("rget_put") || is("rget_rget")) {
    shared_epoch(1, rget_put);
  } else if (is("pscw_put_put") || is("pscw_epochs")) {
    pscw(is("pscw_put_put"), put_put);
  } else if (is("pscw_put_get") || is("pscw_get_get")) {
    pscw(1, is("pscw_put_get") ? put_get : get_get);
  } else if (is("pscw_own") || is("pscw_own_apart")) {
    pscw_own(is("pscw_own_apart"));
  } else if (is("same_origin") || is("flushed")) {
    if (rank == 0) {
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Put(mine, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win); /* mpisentry: same_origin_put */
      if (is("flushed")) MPI_Win_flush(1, win);
      MPI_Put(mine + kPart, kPart, MPI_INT, 1, 2, kPart, MPI_INT, win);
      MPI_Win_unlock(1, win);
    }
  } else if (is("threads") || is("thread_halves")) {
    if (rank == 0) {
      MPI_Win_lock_all(0, win);
      int firsts[2] = {2, is("threads") ? 2 : 8};
      pthread_t thread;
      pthread_create(&thread, NULL, put_part, &firsts[1]);
      put_part(&firsts[0]);
      pthread_join(thread, NULL);
      MPI_Win_unlock_all(win);
    }
  } else if (is("lock_own") || is("lock_own_apart")) {
    lock_own(is("lock_own_apart"));
  } else {
    if (rank == 0) fprintf(stderr, "rma_epochs: unknown case %s\n", mode);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Win_free(&win);
  int sum = 0, all[3];
  for (int i = 0; i < kInts; ++i) sum += ints[i];
  MPI_Gather(&sum, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) printf("rma_epochs %s: window of rank 1 %d\n", mode, deterministic ? all[1] : 0);
  MPI_Finalize();
  return 0;
}
