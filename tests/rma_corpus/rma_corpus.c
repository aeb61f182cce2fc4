/* One-sided races at rank 1's window of kInts ints, each with a correct twin,
 * beyond those of rma_conflicts and rma_epochs (three ranks). argv[1] names
 * the case; each racy case is listed with its twins after it ("| twin"), by
 * kind. Unless said otherwise, ranks 0 and 2 are the origins, each in a
 * shared lock epoch at rank 1 (MPI_Win_lock), and they meet (MPI_Sendrecv)
 * inside their epochs, so that the epochs overlap in time. The cases marked
 * "not tested" are those the checker misses (racy) or reports (correct)
 * today; test_rma_corpus.cpp leaves them out.
 * conflict:
 *   alloc_put_put: both put ints 2 to 5 of an MPI_Win_allocate window
 *   | alloc_halves: rank 0 puts ints 0 to 7, rank 2 ints 8 to 15
 *   shm_put_get: rank 0 puts ints 2 to 5 of an MPI_Win_allocate_shared window, rank 2 gets them
 *   | shm_apart: rank 2 gets ints 8 to 11
 *   dynamic_put_put: both put ints 2 to 5 of the array rank 1 attached to an MPI_Win_create_dynamic window
 *   | dynamic_halves: the halves
 *   overlap_one: rank 0 puts ints 0 to 4, rank 2 gets ints 4 to 7: one int in common
 *   | adjacent: rank 0 puts ints 0 to 3
 *   contig_put: both put one MPI_Type_contiguous of 4 ints at int 2
 *   | contig_halves: two of them each, rank 0 at int 0, rank 2 at int 8
 *   own_source: rank 0 puts ints 2 to 5 while rank 1 puts its own ints 2 to 5 to rank 2 under a lock at rank 2
 *     (its MPI_Put reads them), the two meeting
 *   | own_source_apart: rank 1 puts its ints 8 to 11
 *   split_put_get: shm_put_get's accesses through a window over a communicator that numbers the ranks 2, 1, 0
 *   | split_apart: shm_apart's
 *   alias_windows (not tested: missed): rank 0 puts ints 2 to 5 through the window, rank 2 through a second
 *     window over the same memory (MPI 4.1, 12.2.1: concurrent communications to overlapping windows may lead
 *     to undefined results)
 *   | two_windows: the second window lies over other memory
 * synchronization:
 *   fence_asserts: both put ints 2 to 5 between MPI_Win_fence(MPI_MODE_NOPRECEDE) and the closing
 *     MPI_Win_fence(MPI_MODE_NOSUCCEED), not meeting
 *   | fence_asserts_epochs: rank 0's put, a fence, then rank 2's put
 *   flush_local: rank 0 alone puts ints 2 to 5, calls MPI_Win_flush_local (which completes the put only at
 *     the origin) and puts them again
 *   | flush_all: MPI_Win_flush_all between the puts
 *   flush_local_all: the same in an MPI_Win_lock_all epoch, MPI_Win_flush_local_all between
 *   | flush_lock_all: MPI_Win_flush between
 *   rput_wait: rank 0 alone MPI_Rput ints 2 to 5, MPI_Wait (which completes it only at the origin), then
 *     puts them again
 *   | rput_flush: MPI_Win_flush after the MPI_Wait
 *   | rget_wait (not tested: reported): MPI_Rget, whose MPI_Wait leaves the data read in the origin buffer,
 *     then the put
 *   lock_all_shared: rank 0 puts ints 2 to 5 under MPI_Win_lock, rank 2 gets them under MPI_Win_lock_all
 *   | excl_lock_all: rank 0's lock is exclusive and excludes rank 2's, so they do not meet; both put the same
 *     values (the order of the locks shows in nothing printed)
 *   | excl_shared: rank 0 under an exclusive lock, rank 2 under a shared MPI_Win_lock, the same values
 *   excl_own: rank 0 puts ints 2 to 5 under an exclusive lock while rank 1 gets rank 2's ints into its own
 *     ints 2 to 5 under a lock at rank 2 (rank 0's lock does not exclude rank 1's own call), the two meeting
 *   | excl_own_apart: rank 1 gets into its ints 8 to 11
 *   third_excl: both put ints 2 to 5, while rank 1 takes an exclusive lock on its own window before and
 *     after them (MPI_Barrier between): those locks order neither put
 *   | third_excl_halves: the halves
 *   lock_all_three: all three ranks put ints 2 to 5 in MPI_Win_lock_all epochs, rank 1 into its own window,
 *     and all meet
 *   | lock_all_thirds: rank r puts ints 4r to 4r+3
 *   pscw_put_acc: rank 1 exposes its window to both at once; rank 0 puts ints 2 to 5, rank 2 accumulates
 *     (MPI_SUM) into them, in MPI_Win_start epochs, not meeting
 *   | pscw_acc_acc: both accumulate
 *   pscw_later: rank 1 exposes its window to rank 0, then to both; rank 0's second MPI_Win_start epoch puts
 *     ints 8 to 11, as does rank 2's only one, which matches the second exposure too
 *   | pscw_earlier: rank 1 exposes to both, then to rank 0: rank 2's put lies in the first exposure
 *   pscw_test: one exposure to both, ended by MPI_Win_test until it succeeds; both put ints 2 to 5
 *   | pscw_test_epochs: two exposures so ended, rank 2's put in the first, rank 0's in the second
 *   split_pscw: pscw_test's puts, ended by MPI_Win_wait, through the window of split_put_get
 *   | split_pscw_earlier: pscw_earlier through it
 * atomic:
 *   fetch_no_op_put: rank 0 reads int 3 with MPI_Fetch_and_op and MPI_NO_OP, rank 2 puts ints 2 to 5
 *   | fetch_no_op_acc: rank 2 accumulates (MPI_SUM) into them
 *   swap_acc: rank 0 MPI_Compare_and_swap on int 3, rank 2 accumulates (MPI_SUM) into ints 2 to 5
 *   | swap_no_op: rank 2 reads int 3 with MPI_Fetch_and_op and MPI_NO_OP
 *   replace_put: rank 0 accumulates with MPI_REPLACE into ints 2 to 5, rank 2 puts them
 *   | replace_replace: both MPI_REPLACE, the same values
 *   racc_rget: rank 0 MPI_Raccumulate (MPI_SUM), rank 2 MPI_Rget
 *   | racc_racc: both MPI_Raccumulate
 *   rget_acc_ops: rank 0 MPI_Rget_accumulate with MPI_SUM, rank 2 with MPI_MIN
 *   | rget_acc_same: both with MPI_SUM
 *   acc_contig_ops: rank 0 accumulates (MPI_SUM) one MPI_Type_contiguous of 4 ints at int 2, rank 2 4 MPI_INTs
 *     with MPI_MAX
 *   | acc_contig: rank 2 with MPI_SUM
 * hybrid:
 *   p2p_early: rank 0 puts ints 2 to 5 and sends rank 2 a message before unlocking; rank 2 receives it, then
 *     locks, gets them and answers, and only then does rank 0 unlock
 *   | p2p_after_unlock: rank 0 unlocks, then sends; rank 2 gets after receiving
 *   relay_early: p2p_early with rank 1 passing the message on
 *   | relay_after_unlock: p2p_after_unlock with rank 1 passing it on
 *   flush_local_barrier: in MPI_Win_lock_all epochs, rank 0 puts ints 2 to 5 and calls MPI_Win_flush_local_all,
 *     then all three meet in an MPI_Barrier, then rank 2 gets them
 *   | flush_barrier: MPI_Win_flush_all, which completes the put at rank 1, before the barrier
 *   thread_acc_put: in rank 0's MPI_Win_lock_all epoch a thread accumulates (MPI_SUM) into ints 2 to 5 while
 *     the main thread puts them (MPI_THREAD_MULTIPLE)
 *   | thread_acc_acc: both accumulate
 *   thread_join: a thread of rank 0 puts ints 2 to 5 under rank 0's lock; the main thread joins it and puts
 *     them again: the join does not complete the put
 *   | thread_flush: the thread calls MPI_Win_flush before it ends
 * Rank 0 prints what rank 1's windows ended with and what the gets read, in
 * the correct cases whose outcome does not depend on timing. */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

enum { kInts = 16, kPart = 4 };

/* kReversed: MPI_Win_create over a communicator that numbers the ranks
 * 2, 1, 0, so that ranks 0 and 2 are each other's window rank. */
enum Flavor { kCreated, kAllocated, kSharedMemory, kDynamic, kReversed };
enum Epoch { kNoEpoch, kShared, kExclusive, kLockAll, kStart };
enum Op {
  kNone,
  kPut,
  kPutSame, /* the same values from every rank */
  kGet,
  kOwnGet, /* into this rank's own window memory at `first`, from the target's first ints */
  kOwnPut, /* from this rank's own window memory at `first`, to the target's first ints */
  kRput,
  kSum,
  kMax,
  kReplace, /* the same values from every rank */
  kFetchNoOp,
  kSwap,
  kRaccSum,
  kRget,
  kRgetAccSum,
  kRgetAccMin
};
enum Sync { kNoSync, kFlushLocal, kFlushLocalAll, kFlush, kFlushAll };
enum Flags {
  kMeet = 1,            /* the origins meet inside their epochs */
  kSeparate = 2,        /* the runner's synchronization separates the two accesses */
  kRelay = 4,           /* rank 1 passes rank 0's message on to rank 2 */
  kConcurrent = 8,      /* the second thread runs while the first accesses */
  kAlias = 16,          /* the second window lies over the first one's memory */
  kUnorderedReads = 32, /* what the gets read depends on timing: not printed */
  kPoll = 64,           /* rank 1 ends its exposures with MPI_Win_test, not MPI_Win_wait */
};

/* `count` ints from `first`, or count / kPart contiguous types of kPart. */
typedef struct {
  enum Op op;
  int first, count;
  int contig;
} Access;

typedef struct Case Case;
struct Case {
  const char* name;
  void (*run)(const Case*);
  enum Flavor flavor;
  enum Epoch epochs[3]; /* each rank's (rank 1's at rank 2 for kOwnGet and kOwnPut) */
  Access access[3];     /* each rank's; rank 0 alone: its second one in [2] */
  int flags;
  enum Sync sync;
};

static int rank;
static MPI_Win win;
static MPI_Datatype contig;
static int created[kInts], other[kInts], mine[kInts], same[kInts], got[kInts], old[kInts];
static int* window_ints;      /* this rank's memory in the window */
static MPI_Aint dynamic_base; /* rank 1's attached array, for a dynamic window */
static enum Flavor flavor;
static MPI_Comm window_comm = MPI_COMM_WORLD;

static MPI_Aint displacement(int first) {
  return flavor == kDynamic ? dynamic_base + first * (MPI_Aint)sizeof(int) : first;
}

static MPI_Op op_of(enum Op op) {
  switch (op) {
    case kMax: return MPI_MAX;
    case kRgetAccMin: return MPI_MIN;
    case kReplace: return MPI_REPLACE;
    default: return MPI_SUM;
  }
}

/* The access's one-sided call towards `to`, waited for when request-based. */
static void do_access(const Access* a, int to) {
  const MPI_Aint at = displacement(a->first);
  const MPI_Datatype t = a->contig ? contig : MPI_INT;
  const int n = a->contig ? a->count / kPart : a->count;
  const MPI_Op op = op_of(a->op);
  MPI_Request req = MPI_REQUEST_NULL;
  switch (a->op) {
    case kNone: break;
    case kPut:
      MPI_Put(mine, n, t, to, at, n, t, win); /* mpisentry: put_call */
      break;
    case kPutSame:
      MPI_Put(same, n, t, to, at, n, t, win); /* mpisentry: same_put */
      break;
    case kGet:
      MPI_Get(got, n, t, to, at, n, t, win); /* mpisentry: get_call */
      break;
    case kOwnGet:
      MPI_Get(window_ints + a->first, n, t, to, 0, n, t, win); /* mpisentry: own_get */
      break;
    case kOwnPut:
      MPI_Put(window_ints + a->first, n, t, to, 0, n, t, win); /* mpisentry: own_put */
      break;
    case kRput:
      MPI_Rput(mine, n, t, to, at, n, t, win, &req); /* mpisentry: rput_call */
      break;
    case kSum:
    case kMax:
    case kReplace:
      MPI_Accumulate(a->op == kReplace ? same : mine, n, t, to, at, n, t, op, win); /* mpisentry: accumulate */
      break;
    case kFetchNoOp:
      MPI_Fetch_and_op(NULL, old, MPI_INT, to, at, MPI_NO_OP, win); /* mpisentry: fetch_no_op */
      break;
    case kSwap:
      MPI_Compare_and_swap(mine, got, old, MPI_INT, to, at, win); /* mpisentry: swap */
      break;
    case kRaccSum:
      MPI_Raccumulate(mine, n, t, to, at, n, t, op, win, &req); /* mpisentry: raccumulate */
      break;
    case kRget:
      MPI_Rget(got, n, t, to, at, n, t, win, &req); /* mpisentry: rget_call */
      break;
    case kRgetAccSum:
    case kRgetAccMin:
      MPI_Rget_accumulate(mine, n, t, old, n, t, to, at, n, t, op, win, &req); /* mpisentry: rget_acc */
      break;
  }
  if (req != MPI_REQUEST_NULL) MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static int target_of(const Access* a) { return a->op == kOwnGet || a->op == kOwnPut ? 2 : 1; }

static MPI_Group group_of(int n, const int* ranks) {
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, n, ranks, &group);
  MPI_Group_free(&world);
  return group;
}

static void open_epoch(enum Epoch epoch, int target) {
  MPI_Group group;
  switch (epoch) {
    case kNoEpoch: break;
    case kShared: MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win); break;
    case kExclusive: MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win); break;
    case kLockAll: MPI_Win_lock_all(0, win); break;
    case kStart:
      group = group_of(1, &target);
      MPI_Win_start(group, 0, win);
      MPI_Group_free(&group);
      break;
  }
}

static void close_epoch(enum Epoch epoch, int target) {
  switch (epoch) {
    case kNoEpoch: break;
    case kShared:
    case kExclusive: MPI_Win_unlock(target, win); break;
    case kLockAll: MPI_Win_unlock_all(win); break;
    case kStart: MPI_Win_complete(win); break;
  }
}

static void synchronize(enum Sync sync, int target) {
  switch (sync) {
    case kNoSync: break;
    case kFlushLocal: MPI_Win_flush_local(target, win); break;
    case kFlushLocalAll: MPI_Win_flush_local_all(win); break;
    case kFlush: MPI_Win_flush(target, win); break;
    case kFlushAll: MPI_Win_flush_all(win); break;
  }
}

/* This rank meets every other rank in an epoch of the case, each pair with an
 * MPI_Sendrecv, in increasing rank order (which cannot deadlock). */
static void meet(const Case* c) {
  for (int peer = 0; peer < 3; ++peer) {
    if (peer == rank || c->epochs[peer] == kNoEpoch) continue;
    int token = rank, their;
    MPI_Sendrecv(&token, 1, MPI_INT, peer, 0, &their, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
}

/* Rank 1's exposure epoch ends: MPI_Win_wait, or MPI_Win_test until it ends. */
static void end_exposure(const Case* c) {
  if (!(c->flags & kPoll)) {
    MPI_Win_wait(win);
    return;
  }
  for (int ended = 0; !ended;) MPI_Win_test(win, &ended);
}

/* Each rank with an epoch makes its access in it; rank 1 exposes its window
 * to the ranks in MPI_Win_start epochs, at once. */
static void run_epochs(const Case* c) {
  int starters[3], exposed = 0;
  for (int r = 0; r < 3; ++r)
    if (c->epochs[r] == kStart) starters[exposed++] = r;
  MPI_Group group = MPI_GROUP_NULL;
  if (rank == 1 && exposed > 0) {
    group = group_of(exposed, starters);
    MPI_Win_post(group, 0, win);
  }
  const Access* a = &c->access[rank];
  if (c->epochs[rank] != kNoEpoch) {
    open_epoch(c->epochs[rank], target_of(a));
    do_access(a, target_of(a));
    if (c->flags & kMeet) meet(c);
    close_epoch(c->epochs[rank], target_of(a));
  }
  if (group != MPI_GROUP_NULL) {
    end_exposure(c);
    MPI_Group_free(&group);
  }
}

/* run_epochs through two windows: rank 2 uses a second one, over the same
 * memory (kAlias) or over other ints. */
static void run_alias(const Case* c) {
  MPI_Win first = win, second;
  MPI_Win_create(c->flags & kAlias ? window_ints : other, sizeof other, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                 &second);
  if (rank == 2) win = second;
  run_epochs(c);
  win = first;
  MPI_Win_free(&second);
}

/* Rank 1 takes an exclusive lock on its own window before and after the
 * others' epochs. */
static void own_exclusive(void) {
  if (rank != 1) return;
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
  MPI_Win_unlock(1, win);
}

static void run_third_excl(const Case* c) {
  own_exclusive();
  MPI_Barrier(MPI_COMM_WORLD);
  run_epochs(c);
  MPI_Barrier(MPI_COMM_WORLD);
  own_exclusive();
}

static void run_fences(const Case* c) {
  MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
  if (rank == 0) do_access(&c->access[0], 1);
  if (c->flags & kSeparate) MPI_Win_fence(0, win);
  if (rank == 2) do_access(&c->access[2], 1);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
}

/* Rank 0 alone: an access, the case's synchronization, another access, all in
 * one epoch. */
static void run_one_origin(const Case* c) {
  if (rank != 0) return;
  open_epoch(c->epochs[0], 1);
  do_access(&c->access[0], 1);
  synchronize(c->sync, 1);
  do_access(&c->access[2], 1);
  close_epoch(c->epochs[0], 1);
}

/* Ranks 0 and 2 hold their epochs over an MPI_Barrier of all three: rank 0
 * accesses and synchronizes before it, rank 2 accesses after it. */
static void run_barrier(const Case* c) {
  open_epoch(c->epochs[rank], 1);
  if (rank == 0) {
    do_access(&c->access[0], 1);
    synchronize(c->sync, 1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 2) do_access(&c->access[2], 1);
  close_epoch(c->epochs[rank], 1);
}

static const Case* threaded;

static void* thread_access(void* unused) {
  (void)unused;
  do_access(&threaded->access[0], 1);
  synchronize(threaded->sync, 1);
  return NULL;
}

/* Rank 0's second thread makes the first access, its main thread the second
 * one, while the thread runs (kConcurrent) or after joining it. */
static void run_threads(const Case* c) {
  if (rank != 0) return;
  threaded = c;
  open_epoch(c->epochs[0], 1);
  pthread_t thread;
  pthread_create(&thread, NULL, thread_access, NULL);
  if (!(c->flags & kConcurrent)) pthread_join(thread, NULL);
  do_access(&c->access[2], 1);
  if (c->flags & kConcurrent) pthread_join(thread, NULL);
  close_epoch(c->epochs[0], 1);
}

/* Rank 0's message to rank 2 (through rank 1 with kRelay) orders rank 0's
 * access before rank 2's when sent after the unlock (kSeparate). Otherwise
 * rank 0 unlocks only after rank 2's answer, sent from inside its epoch. */
static void run_p2p(const Case* c) {
  const int early = !(c->flags & kSeparate), relay = c->flags & kRelay;
  int token = 0;
  if (rank == 0) {
    open_epoch(c->epochs[0], 1);
    do_access(&c->access[0], 1);
    if (!early) close_epoch(c->epochs[0], 1);
    MPI_Send(&token, 1, MPI_INT, relay ? 1 : 2, 0, MPI_COMM_WORLD);
    if (early) {
      MPI_Recv(&token, 1, MPI_INT, 2, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      close_epoch(c->epochs[0], 1);
    }
  } else if (rank == 1 && relay) {
    MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&token, 1, MPI_INT, 2, 0, MPI_COMM_WORLD);
  } else if (rank == 2) {
    MPI_Recv(&token, 1, MPI_INT, relay ? 1 : 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    open_epoch(c->epochs[2], 1);
    do_access(&c->access[2], 1);
    if (early) MPI_Send(&token, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    close_epoch(c->epochs[2], 1);
  }
}

/* Rank 1 exposes its window twice: to rank 0, then to both (or to both,
 * then to rank 0 with kSeparate). Rank 0 makes two MPI_Win_start epochs, an
 * empty one, then one with its access; rank 2 one. */
static void run_exposures(const Case* c) {
  if (rank == 1) {
    const int both[2] = {0, 2}, later = !(c->flags & kSeparate);
    const int sizes[2] = {later ? 1 : 2, later ? 2 : 1};
    for (int i = 0; i < 2; ++i) {
      MPI_Group group = group_of(sizes[i], both);
      MPI_Win_post(group, 0, win);
      end_exposure(c);
      MPI_Group_free(&group);
    }
    return;
  }
  if (rank == 0) {
    open_epoch(kStart, 1);
    close_epoch(kStart, 1);
  }
  open_epoch(kStart, 1);
  do_access(&c->access[rank], 1);
  close_epoch(kStart, 1);
}

/* Shorthands for the table: the epochs of the two origins, ranks 0 and 2, of
 * rank 0 alone, of rank 0 and of rank 1 at rank 2 (its own calls), of all
 * three; an access to ints or to contiguous types of kPart ints; the accesses
 * of ranks 0 and 2 (both putting the same values at ints 2 to 5), of ranks 0
 * and 1, and the puts of all three. */
#define ORIGINS(epoch0, epoch2) \
  { epoch0, kNoEpoch, epoch2 }
#define SHARED ORIGINS(kShared, kShared)
#define STARTS ORIGINS(kStart, kStart)
#define LOCK_ALLS ORIGINS(kLockAll, kLockAll)
#define ALONE(epoch) \
  { epoch, kNoEpoch, kNoEpoch }
#define WITH_OWN(epoch0) \
  { epoch0, kShared, kNoEpoch }
#define ALL3(epoch) \
  { epoch, epoch, epoch }
#define INTS(op, first, count) \
  { op, first, count, 0 }
#define TYPES(op, first, count) \
  { op, first, count, 1 }
#define NO_ACCESS INTS(kNone, 0, 0)
#define PAIR(op0, first0, count0, op2, first2, count2) \
  { INTS(op0, first0, count0), NO_ACCESS, INTS(op2, first2, count2) }
#define OWN(op0, first0, count0, op1, first1, count1) \
  { INTS(op0, first0, count0), INTS(op1, first1, count1), NO_ACCESS }
#define SAME_PUTS PAIR(kPutSame, 2, kPart, kPutSame, 2, kPart)
#define PUTS3(first0, first1, first2) \
  { INTS(kPut, first0, kPart), INTS(kPut, first1, kPart), INTS(kPut, first2, kPart) }

static const Case kCases[] = {
    {"alloc_put_put", run_epochs, kAllocated, SHARED, PAIR(kPut, 2, 4, kPut, 2, 4), kMeet, kNoSync},
    {"alloc_halves", run_epochs, kAllocated, SHARED, PAIR(kPut, 0, 8, kPut, 8, 8), kMeet, kNoSync},
    {"shm_put_get", run_epochs, kSharedMemory, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), kMeet, kNoSync},
    {"shm_apart", run_epochs, kSharedMemory, SHARED, PAIR(kPut, 2, 4, kGet, 8, 4), kMeet, kNoSync},
    {"dynamic_put_put", run_epochs, kDynamic, SHARED, PAIR(kPut, 2, 4, kPut, 2, 4), kMeet, kNoSync},
    {"dynamic_halves", run_epochs, kDynamic, SHARED, PAIR(kPut, 0, 8, kPut, 8, 8), kMeet, kNoSync},
    {"overlap_one", run_epochs, kCreated, SHARED, PAIR(kPut, 0, 5, kGet, 4, 4), kMeet, kNoSync},
    {"adjacent", run_epochs, kCreated, SHARED, PAIR(kPut, 0, 4, kGet, 4, 4), kMeet, kNoSync},
    {"contig_put", run_epochs, kCreated, SHARED, {TYPES(kPut, 2, 4), NO_ACCESS, TYPES(kPut, 2, 4)}, kMeet, kNoSync},
    {"contig_halves", run_epochs, kCreated, SHARED, {TYPES(kPut, 0, 8), NO_ACCESS, TYPES(kPut, 8, 8)}, kMeet, kNoSync},
    {"own_source", run_epochs, kCreated, WITH_OWN(kShared), OWN(kPut, 2, 4, kOwnPut, 2, 4), kMeet, kNoSync},
    {"own_source_apart", run_epochs, kCreated, WITH_OWN(kShared), OWN(kPut, 2, 4, kOwnPut, 8, 4), kMeet, kNoSync},
    {"split_put_get", run_epochs, kReversed, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), kMeet, kNoSync},
    {"split_apart", run_epochs, kReversed, SHARED, PAIR(kPut, 2, 4, kGet, 8, 4), kMeet, kNoSync},
    {"split_pscw", run_epochs, kReversed, STARTS, PAIR(kPut, 2, 4, kPut, 2, 4), 0, kNoSync},
    {"split_pscw_earlier", run_exposures, kReversed, STARTS, PAIR(kPut, 8, 4, kPut, 8, 4), kSeparate, kNoSync},
    {"alias_windows", run_alias, kCreated, SHARED, PAIR(kPut, 2, 4, kPut, 2, 4), kMeet | kAlias, kNoSync},
    {"two_windows", run_alias, kCreated, SHARED, PAIR(kPut, 2, 4, kPut, 2, 4), kMeet, kNoSync},

    {"fence_asserts", run_fences, kCreated, ALONE(kNoEpoch), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kNoSync},
    {"fence_asserts_epochs", run_fences, kCreated, ALONE(kNoEpoch), PAIR(kPut, 2, 4, kPut, 2, 4), kSeparate, kNoSync},
    {"flush_local", run_one_origin, kCreated, ALONE(kShared), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kFlushLocal},
    {"flush_all", run_one_origin, kCreated, ALONE(kShared), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kFlushAll},
    {"flush_local_all", run_one_origin, kCreated, ALONE(kLockAll), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kFlushLocalAll},
    {"flush_lock_all", run_one_origin, kCreated, ALONE(kLockAll), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kFlush},
    {"rput_wait", run_one_origin, kCreated, ALONE(kShared), PAIR(kRput, 2, 4, kPut, 2, 4), 0, kNoSync},
    {"rput_flush", run_one_origin, kCreated, ALONE(kShared), PAIR(kRput, 2, 4, kPut, 2, 4), 0, kFlush},
    {"rget_wait", run_one_origin, kCreated, ALONE(kShared), PAIR(kRget, 2, 4, kPut, 2, 4), 0, kNoSync},
    {"lock_all_shared", run_epochs, kCreated, ORIGINS(kShared, kLockAll), PAIR(kPut, 2, 4, kGet, 2, 4), kMeet, kNoSync},
    {"excl_lock_all", run_epochs, kCreated, ORIGINS(kExclusive, kLockAll), SAME_PUTS, 0, kNoSync},
    {"excl_shared", run_epochs, kCreated, ORIGINS(kExclusive, kShared), SAME_PUTS, 0, kNoSync},
    {"excl_own", run_epochs, kCreated, WITH_OWN(kExclusive), OWN(kPut, 2, 4, kOwnGet, 2, 4), kMeet, kNoSync},
    {"excl_own_apart", run_epochs, kCreated, WITH_OWN(kExclusive), OWN(kPut, 2, 4, kOwnGet, 8, 4), kMeet, kNoSync},
    {"third_excl", run_third_excl, kCreated, SHARED, PAIR(kPut, 2, 4, kPut, 2, 4), kMeet, kNoSync},
    {"third_excl_halves", run_third_excl, kCreated, SHARED, PAIR(kPut, 0, 8, kPut, 8, 8), kMeet, kNoSync},
    {"lock_all_three", run_epochs, kCreated, ALL3(kLockAll), PUTS3(2, 2, 2), kMeet, kNoSync},
    {"lock_all_thirds", run_epochs, kCreated, ALL3(kLockAll), PUTS3(0, 4, 8), kMeet, kNoSync},
    {"pscw_put_acc", run_epochs, kCreated, STARTS, PAIR(kPut, 2, 4, kSum, 2, 4), 0, kNoSync},
    {"pscw_acc_acc", run_epochs, kCreated, STARTS, PAIR(kSum, 2, 4, kSum, 2, 4), 0, kNoSync},
    {"pscw_later", run_exposures, kCreated, STARTS, PAIR(kPut, 8, 4, kPut, 8, 4), 0, kNoSync},
    {"pscw_earlier", run_exposures, kCreated, STARTS, PAIR(kPut, 8, 4, kPut, 8, 4), kSeparate, kNoSync},
    {"pscw_test", run_epochs, kCreated, STARTS, PAIR(kPut, 2, 4, kPut, 2, 4), kPoll, kNoSync},
    {"pscw_test_epochs", run_exposures, kCreated, STARTS, PAIR(kPut, 2, 4, kPut, 2, 4), kSeparate | kPoll, kNoSync},

    {"fetch_no_op_put", run_epochs, kCreated, SHARED, PAIR(kFetchNoOp, 3, 1, kPut, 2, 4), kMeet, kNoSync},
    {"fetch_no_op_acc", run_epochs, kCreated, SHARED, PAIR(kFetchNoOp, 3, 1, kSum, 2, 4), kMeet | kUnorderedReads,
     kNoSync},
    {"swap_acc", run_epochs, kCreated, SHARED, PAIR(kSwap, 3, 1, kSum, 2, 4), kMeet, kNoSync},
    {"swap_no_op", run_epochs, kCreated, SHARED, PAIR(kSwap, 3, 1, kFetchNoOp, 3, 1), kMeet, kNoSync},
    {"replace_put", run_epochs, kCreated, SHARED, PAIR(kReplace, 2, 4, kPut, 2, 4), kMeet, kNoSync},
    {"replace_replace", run_epochs, kCreated, SHARED, PAIR(kReplace, 2, 4, kReplace, 2, 4), kMeet, kNoSync},
    {"racc_rget", run_epochs, kCreated, SHARED, PAIR(kRaccSum, 2, 4, kRget, 2, 4), kMeet, kNoSync},
    {"racc_racc", run_epochs, kCreated, SHARED, PAIR(kRaccSum, 2, 4, kRaccSum, 2, 4), kMeet, kNoSync},
    {"rget_acc_ops", run_epochs, kCreated, SHARED, PAIR(kRgetAccSum, 2, 4, kRgetAccMin, 2, 4), kMeet, kNoSync},
    {"rget_acc_same", run_epochs, kCreated, SHARED, PAIR(kRgetAccSum, 2, 4, kRgetAccSum, 2, 4), kMeet | kUnorderedReads,
     kNoSync},
    {"acc_contig_ops", run_epochs, kCreated, SHARED, {TYPES(kSum, 2, 4), NO_ACCESS, INTS(kMax, 2, 4)}, kMeet, kNoSync},
    {"acc_contig", run_epochs, kCreated, SHARED, {TYPES(kSum, 2, 4), NO_ACCESS, INTS(kSum, 2, 4)}, kMeet, kNoSync},

    {"p2p_early", run_p2p, kCreated, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), 0, kNoSync},
    {"p2p_after_unlock", run_p2p, kCreated, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), kSeparate, kNoSync},
    {"relay_early", run_p2p, kCreated, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), kRelay, kNoSync},
    {"relay_after_unlock", run_p2p, kCreated, SHARED, PAIR(kPut, 2, 4, kGet, 2, 4), kRelay | kSeparate, kNoSync},
    {"flush_local_barrier", run_barrier, kCreated, LOCK_ALLS, PAIR(kPut, 2, 4, kGet, 2, 4), 0, kFlushLocalAll},
    {"flush_barrier", run_barrier, kCreated, LOCK_ALLS, PAIR(kPut, 2, 4, kGet, 2, 4), 0, kFlushAll},
    {"thread_acc_put", run_threads, kCreated, ALONE(kLockAll), PAIR(kSum, 2, 4, kPut, 2, 4), kConcurrent, kNoSync},
    {"thread_acc_acc", run_threads, kCreated, ALONE(kLockAll), PAIR(kSum, 2, 4, kSum, 2, 4), kConcurrent, kNoSync},
    {"thread_join", run_threads, kCreated, ALONE(kShared), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kNoSync},
    {"thread_flush", run_threads, kCreated, ALONE(kShared), PAIR(kPut, 2, 4, kPut, 2, 4), 0, kFlush},
};

static void make_window(void) {
  const MPI_Aint bytes = sizeof created;
  window_ints = created;
  switch (flavor) {
    case kCreated: MPI_Win_create(created, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win); break;
    case kAllocated: MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window_ints, &win); break;
    case kSharedMemory:
      MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &window_ints, &win);
      break;
    case kReversed:
      MPI_Comm_split(MPI_COMM_WORLD, 0, 2 - rank, &window_comm);
      MPI_Win_create(created, bytes, sizeof(int), MPI_INFO_NULL, window_comm, &win);
      break;
    case kDynamic:
      MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
      MPI_Win_attach(win, created, bytes);
      MPI_Get_address(created, &dynamic_base);
      MPI_Bcast(&dynamic_base, 1, MPI_AINT, 1, MPI_COMM_WORLD);
      break;
  }
  for (int i = 0; i < kInts; ++i) window_ints[i] = rank * 100 + i;
  MPI_Barrier(MPI_COMM_WORLD); /* every window is filled before the first access */
}

int main(int argc, char** argv) {
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* name = argc > 1 ? argv[1] : "alloc_halves";
  const Case* c = NULL;
  for (size_t i = 0; i < sizeof kCases / sizeof kCases[0]; ++i)
    if (strcmp(kCases[i].name, name) == 0) c = &kCases[i];
  if (c == NULL) {
    if (rank == 0) fprintf(stderr, "rma_corpus: unknown case %s\n", name);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Type_contiguous(kPart, MPI_INT, &contig);
  MPI_Type_commit(&contig);
  for (int i = 0; i < kInts; ++i) {
    mine[i] = rank * 1000 + i;
    other[i] = rank * 10 + i;
    same[i] = 7;
    got[i] = old[i] = -1;
  }
  flavor = c->flavor;
  make_window();
  c->run(c);
  /* Every access is complete once all have passed the barrier; the lock and
   * MPI_Win_sync make them visible in this rank's memory. */
  MPI_Barrier(MPI_COMM_WORLD);
  int sums[2] = {0, 0}, all[2 * 3], me;
  MPI_Comm_rank(window_comm, &me);
  MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
  MPI_Win_sync(win);
  for (int i = 0; i < kInts; ++i) {
    sums[0] += window_ints[i] + other[i];
    sums[1] += got[i] + old[i];
  }
  MPI_Win_unlock(me, win);
  if (flavor == kDynamic) MPI_Win_detach(win, created);
  MPI_Win_free(&win);
  if (flavor == kReversed) MPI_Comm_free(&window_comm);
  MPI_Type_free(&contig);
  MPI_Gather(sums, 2, MPI_INT, all, 2, MPI_INT, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    const int gets = c->flags & kUnorderedReads ? 0 : all[1] + all[3] + all[5];
    printf("rma_corpus %s: window of rank 1 %d, gets %d\n", name, all[2], gets);
  }
  MPI_Finalize();
  return 0;
}
