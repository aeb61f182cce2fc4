/* A correct MPI program with random communication. From --seed every rank
 * builds the same schedule of steps (point-to-point exchanges with fixed and
 * MPI_ANY_SOURCE receives, persistent requests, MPI_Sendrecv, blocking and
 * nonblocking collectives, on MPI_COMM_WORLD and on split and duplicated
 * communicators), runs it, checks every value it received, and rank 0 prints
 * "ok <checksum>": the same line for the same seed and rank count, whatever
 * the timing.
 *
 *   random_program --seed S [--steps N] [--delay-seconds D --delay-percent P]
 *                  [--bug missing-send|swapped-receives|skipped-collective]
 *                  [--kinds KIND,...] [--print-schedule]
 *
 * --kinds draws the steps from the kinds listed only (names as in
 * --print-schedule). With a delay, before P% of the steps one of the step's ranks computes for D
 * seconds, so that the others wait for it in whatever the step calls. With a
 * bug, one step (chosen from the seed) is broken so that the job hangs: rank 0
 * prints "bug ..." and, for every rank, "expect <rank> <MPI call> <function>",
 * the call that rank hangs in and the function of this program making it;
 * every rank stops after that step and meets the others in a final
 * MPI_Allreduce on a communicator of its own. */
#include <inttypes.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

enum {
  kMaxRanks = 64,
  kMaxSteps = 400,
  kTagsPerStep = 64,       /* tags of step s: s * kTagsPerStep + 0..63 */
  kReverseTags = 16,       /* offset of the second direction's tags */
  kSpareTag = 63,          /* a persistent receive that is never started */
  kMaxMessages = 4,
  kMaxRequests = 2 * kMaxRanks + 16,
  kMaxErrorsShown = 10,
};

/* ---- Random numbers: splitmix64, the same stream on every rank ---------- */

static uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

typedef struct {
  uint64_t state;
} Rng;

static uint64_t rng_next(Rng* rng) {
  rng->state += 0x9e3779b97f4a7c15ULL;
  return mix(rng->state);
}

static int rng_below(Rng* rng, int bound) { return (int)(rng_next(rng) % (uint64_t)bound); }

/* A value every rank computes alike from a step's salt: per-rank choices
 * need no draws in a common order. */
static uint64_t derive(uint64_t salt, uint64_t what, uint64_t who) { return mix(salt ^ mix(what ^ mix(who))); }

static int derive_below(uint64_t salt, uint64_t what, uint64_t who, int bound) {
  return (int)(derive(salt, what, who) % (uint64_t)bound);
}

/* Element i of message `what` from world rank `from` to world rank `to`. */
static int value_of(uint64_t salt, int what, int from, int to, int i) {
  return (int)(derive(salt, ((uint64_t)what << 40) ^ ((uint64_t)from << 20) ^ (uint64_t)to, (uint64_t)i) >> 34);
}

/* ---- Options ------------------------------------------------------------ */

typedef enum {
  EXCHANGE,        /* Isend/Issend + Irecv to and from neighbours */
  FAN_IN,          /* every rank sends to a root that receives from MPI_ANY_SOURCE */
  SSEND_PAIRS,     /* pairs: blocking MPI_Ssend one way, then the other */
  SENDRECV,        /* MPI_Sendrecv or MPI_Sendrecv_replace with neighbours */
  PERSISTENT,      /* persistent requests started several times */
  ROOTED,          /* Bcast, Reduce, Gather, Scatter */
  UNROOTED,        /* Barrier, Allreduce, Allgather, Alltoall */
  NONBLOCKING_COLLECTIVES, /* Ibarrier, Iallreduce, Ibcast */
  KIND_COUNT
} Kind;
static const char* const kKindNames[] = {"exchange",   "fan-in", "ssend-pairs", "sendrecv",
                                         "persistent", "rooted", "unrooted",    "nonblocking-collectives"};
static const int kKindWeights[] = {3, 2, 2, 2, 2, 3, 3, 2};


typedef enum { BUG_NONE, BUG_MISSING_SEND, BUG_SWAPPED_RECEIVES, BUG_SKIPPED_COLLECTIVE } BugKind;
static const char* const kBugNames[] = {"none", "missing-send", "swapped-receives", "skipped-collective"};

typedef struct {
  uint64_t seed;
  int steps;
  double delay_seconds;
  int delay_percent;
  BugKind bug;
  int kinds[KIND_COUNT]; /* 1: steps of that kind are drawn */
  int print_schedule;
} Options;

static int world_rank;
static int world_size;

/* Rank 0 says what is wrong (with the usage when `usage`); the job ends. */
static void stop_job(int usage, const char* format, va_list args) {
  if (world_rank == 0) {
    fprintf(stderr, "random_program: ");
    vfprintf(stderr, format, args);
    fprintf(stderr, "\n");
    if (usage)
      fprintf(stderr,
              "usage: random_program --seed S [--steps N] [--delay-seconds D --delay-percent P]"
              " [--bug missing-send|swapped-receives|skipped-collective] [--kinds KIND,...] [--print-schedule]\n"
              "kinds: exchange, fan-in, ssend-pairs, sendrecv, persistent, rooted, unrooted,"
              " nonblocking-collectives\n");
    fflush(stderr);
  }
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static void usage_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  stop_job(1, format, args);
  va_end(args);
}

static void internal_error(const char* format, ...) {
  va_list args;
  va_start(args, format);
  stop_job(0, format, args);
  va_end(args);
}

static const char* option_value(int argc, char** argv, int* index) {
  if (*index + 1 >= argc) usage_error("option %s needs a value", argv[*index]);
  *index += 1;
  return argv[*index];
}

static long long integer_value(const char* option, const char* text, long long min, long long max) {
  char* end = NULL;
  const long long value = strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value < min || value > max)
    usage_error("%s must be an integer from %lld to %lld, got '%s'", option, min, max, text);
  return value;
}

/* "exchange,rooted" -> kinds[EXCHANGE] = kinds[ROOTED] = 1. */
static void parse_kinds(const char* list, int* kinds) {
  char copy[256];
  snprintf(copy, sizeof copy, "%s", list);
  for (char* name = strtok(copy, ","); name; name = strtok(NULL, ",")) {
    int found = 0;
    for (int kind = 0; kind < KIND_COUNT; ++kind)
      if (strcmp(name, kKindNames[kind]) == 0) found = kinds[kind] = 1;
    if (!found) usage_error("--kinds: unknown kind '%s'", name);
  }
}

static Options parse_options(int argc, char** argv) {
  Options options = {.steps = 24};
  int kinds_given = 0;
  int seed_given = 0;
  for (int i = 1; i < argc; ++i) {
    const char* option = argv[i];
    if (strcmp(option, "--seed") == 0) {
      const char* text = option_value(argc, argv, &i);
      char* end = NULL;
      options.seed = strtoull(text, &end, 10);
      if (end == text || *end != '\0' || text[0] == '-') usage_error("--seed must be an integer >= 0, got '%s'", text);
      seed_given = 1;
    } else if (strcmp(option, "--steps") == 0) {
      options.steps = (int)integer_value(option, option_value(argc, argv, &i), 1, kMaxSteps);
    } else if (strcmp(option, "--delay-seconds") == 0) {
      /* seconds_argument checks argv[i] itself. */
      option_value(argc, argv, &i);
      options.delay_seconds = seconds_argument(argc, argv, i, "--delay-seconds");
    } else if (strcmp(option, "--delay-percent") == 0) {
      options.delay_percent = (int)integer_value(option, option_value(argc, argv, &i), 0, 100);
    } else if (strcmp(option, "--bug") == 0) {
      const char* name = option_value(argc, argv, &i);
      options.bug = BUG_NONE;
      for (int kind = BUG_MISSING_SEND; kind <= BUG_SKIPPED_COLLECTIVE; ++kind)
        if (strcmp(name, kBugNames[kind]) == 0) options.bug = (BugKind)kind;
      if (options.bug == BUG_NONE)
        usage_error("--bug must be missing-send, swapped-receives or skipped-collective, got '%s'", name);
    } else if (strcmp(option, "--kinds") == 0) {
      parse_kinds(option_value(argc, argv, &i), options.kinds);
      kinds_given = 1;
    } else if (strcmp(option, "--print-schedule") == 0) {
      options.print_schedule = 1;
    } else {
      usage_error("unknown argument '%s'", option);
    }
  }
  if (!seed_given) usage_error("--seed is missing");
  if (!kinds_given)
    for (int kind = 0; kind < KIND_COUNT; ++kind) options.kinds[kind] = 1;
  return options;
}

/* ---- Errors in received data -------------------------------------------- */

static uint64_t checksum;
static uint64_t errors;

static void data_error(int step, const char* format, ...) {
  if (++errors > kMaxErrorsShown) return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "random_program: rank %d, step %d: ", world_rank, step);
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
}

/* Adds a received value to the checksum: a sum, so the matching order does
 * not change it. */
static void check_value(int step, int got, int expected, const char* what) {
  if (got != expected) data_error(step, "%s holds %d instead of %d", what, got, expected);
  checksum += mix((uint64_t)(uint32_t)got);
}

/* ---- Communicators ------------------------------------------------------ */

typedef enum { COMM_WORLD, COMM_DUP, COMM_HALVES, COMM_SOME, COMM_HALVES_DUP, COMM_COUNT } CommIndex;
static const char* const kCommNames[] = {"MPI_COMM_WORLD", "dup of world", "split of world in two",
                                         "split of the dup, some ranks left out", "dup of the split in two"};

/* How every world rank's group is formed: ranks of equal color, ordered by
 * key then by world rank (MPI_Comm_split's order). Color -1: no group. */
typedef struct {
  MPI_Comm comm;
  int color[kMaxRanks];
  int key[kMaxRanks];
} Comm;

static Comm comms[COMM_COUNT];
static MPI_Comm final_comm;

/* A rank's group in one communicator: world ranks by local rank. */
typedef struct {
  MPI_Comm comm;
  int size;
  int me; /* local rank of the rank asked about */
  int world[kMaxRanks];
} Group;

/* The group of world rank `who` in communicator `index`; 0 when it has none. */
static int group_of(CommIndex index, int who, Group* group) {
  const Comm* comm = &comms[index];
  if (comm->color[who] < 0) return 0;
  group->comm = comm->comm;
  group->size = 0;
  for (int w = 0; w < world_size; ++w)
    if (comm->color[w] == comm->color[who]) group->world[group->size++] = w;
  /* Insertion sort by (key, world rank). */
  for (int i = 1; i < group->size; ++i)
    for (int j = i; j > 0; --j) {
      const int a = group->world[j - 1], b = group->world[j];
      if (comm->key[a] < comm->key[b] || (comm->key[a] == comm->key[b] && a < b)) break;
      group->world[j - 1] = b;
      group->world[j] = a;
    }
  for (int i = 0; i < group->size; ++i)
    if (group->world[i] == who) group->me = i;
  return 1;
}

static void check_comm(CommIndex index) {
  Group group;
  if (!group_of(index, world_rank, &group)) {
    if (comms[index].comm != MPI_COMM_NULL)
      internal_error("rank %d should have no %s", world_rank, kCommNames[index]);
    return;
  }
  int rank = -1, size = -1;
  MPI_Comm_rank(comms[index].comm, &rank);
  MPI_Comm_size(comms[index].comm, &size);
  if (rank != group.me || size != group.size)
    internal_error("rank %d is %d of %d in %s, the schedule says %d of %d", world_rank, rank, size,
                kCommNames[index], group.me, group.size);
}

static void create_comms(Rng* rng) {
  for (int w = 0; w < world_size; ++w) {
    comms[COMM_WORLD].color[w] = 0;
    comms[COMM_WORLD].key[w] = w;
    comms[COMM_HALVES].color[w] = rng_below(rng, 2);
    comms[COMM_HALVES].key[w] = rng_below(rng, 1000);
    comms[COMM_SOME].color[w] = rng_below(rng, 3) == 0 ? -1 : 0;
    comms[COMM_SOME].key[w] = rng_below(rng, 1000);
  }
  comms[COMM_DUP] = comms[COMM_WORLD];
  comms[COMM_HALVES_DUP] = comms[COMM_HALVES];
  comms[COMM_WORLD].comm = MPI_COMM_WORLD;
  MPI_Comm_dup(MPI_COMM_WORLD, &comms[COMM_DUP].comm);
  MPI_Comm_split(MPI_COMM_WORLD, comms[COMM_HALVES].color[world_rank], comms[COMM_HALVES].key[world_rank],
                 &comms[COMM_HALVES].comm);
  const int some_color = comms[COMM_SOME].color[world_rank];
  MPI_Comm_split(comms[COMM_DUP].comm, some_color < 0 ? MPI_UNDEFINED : some_color, comms[COMM_SOME].key[world_rank],
                 &comms[COMM_SOME].comm);
  MPI_Comm_dup(comms[COMM_HALVES].comm, &comms[COMM_HALVES_DUP].comm);
  MPI_Comm_dup(MPI_COMM_WORLD, &final_comm);
  for (int index = 0; index < COMM_COUNT; ++index) check_comm((CommIndex)index);
}

static void free_comms(void) {
  for (int index = COMM_DUP; index < COMM_COUNT; ++index)
    if (comms[index].comm != MPI_COMM_NULL) MPI_Comm_free(&comms[index].comm);
  MPI_Comm_free(&final_comm);
}

/* ---- The schedule ------------------------------------------------------- */

typedef enum { PAIRS, RING, CHAIN, TOPOLOGY_COUNT } Topology;
static const char* const kTopologyNames[] = {"pairs", "ring", "chain"};

typedef enum { BCAST, REDUCE, GATHER, SCATTER, ROOTED_COUNT } RootedOperation;
static const char* const kRootedNames[] = {"MPI_Bcast", "MPI_Reduce", "MPI_Gather", "MPI_Scatter"};
typedef enum { BARRIER, ALLREDUCE, ALLGATHER, ALLTOALL, UNROOTED_COUNT } UnrootedOperation;
static const char* const kUnrootedNames[] = {"MPI_Barrier", "MPI_Allreduce", "MPI_Allgather", "MPI_Alltoall"};
typedef enum { IBARRIER, IALLREDUCE, IBCAST, NONBLOCKING_COUNT } NonblockingOperation;

/* How a rank completes an array of requests. */
typedef enum {
  WAIT_EACH, WAITALL, WAITANY_LOOP, WAITSOME_LOOP, /* blocking */
  TEST_EACH, TESTALL, TESTANY_LOOP, TESTSOME_LOOP, /* polling */
  MODE_COUNT
} Mode;
static const char* const kModeCalls[] = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                                         "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"};
static int is_blocking(Mode mode) { return mode < TEST_EACH; }

typedef struct {
  Kind kind;
  CommIndex comm;
  int count;     /* ints per message */
  int shape;     /* Topology, or the collective operation */
  int messages;  /* per direction; iterations of PERSISTENT; operations of NONBLOCKING_COLLECTIVES */
  uint64_t salt; /* everything else, derived per rank */
  int delayed_rank; /* world rank that computes before its part, or -1 */
} Step;

/* What a broken step does: `culprit` leaves out its send to `victim`
 * (message `message`), `victim` swaps its receives from `culprit`, or
 * `culprit` skips the collective. */
typedef struct {
  BugKind kind;
  int step;
  int victim;
  int culprit;
  int message;
} Bug;

static Options options;
static Step schedule[kMaxSteps];
static Bug bug = {.kind = BUG_NONE, .step = -1, .victim = -1, .culprit = -1};

static int tag_base(int step) { return step * kTagsPerStep; }

static Mode mode_of(const Step* step, int who) {
  return (Mode)derive_below(step->salt, 'm', (uint64_t)who, MODE_COUNT);
}
static int uses_any_source(const Step* step, int who) { return derive_below(step->salt, 'a', (uint64_t)who, 2); }
static int root_of(const Step* step, const Group* group) { return derive_below(step->salt, 'r', 0, group->size); }
/* A fan-in root that receives with MPI_Recv rather than MPI_Irecv. */
static int receives_one_by_one(const Step* step, int who) {
  return derive_below(step->salt, 'R', (uint64_t)who, 2) == 0;
}

/* MPI_PROC_NULL neighbours keep their value as a local rank. */
typedef struct {
  int left;  /* receives from */
  int right; /* sends to */
} Neighbours;

/* Local ranks in a random order drawn from the step: pairs are positions 2k
 * and 2k+1; an odd one out pairs with MPI_PROC_NULL. */
static int pair_partner(const Step* step, const Group* group, int local) {
  int position[kMaxRanks];
  for (int l = 0; l < group->size; ++l) {
    const uint64_t key = derive(step->salt, 'p', (uint64_t)group->world[l]);
    position[l] = 0;
    for (int k = 0; k < group->size; ++k) {
      const uint64_t other = derive(step->salt, 'p', (uint64_t)group->world[k]);
      if (other < key || (other == key && k < l)) ++position[l];
    }
  }
  for (int l = 0; l < group->size; ++l)
    if (position[l] == (position[local] ^ 1)) return l;
  return MPI_PROC_NULL;
}

/* The first of a pair sends first. */
static int is_first_of_pair(const Step* step, const Group* group, int local, int partner) {
  const uint64_t mine = derive(step->salt, 'p', (uint64_t)group->world[local]);
  const uint64_t theirs = derive(step->salt, 'p', (uint64_t)group->world[partner]);
  return mine < theirs || (mine == theirs && local < partner);
}

static Neighbours neighbours(const Step* step, const Group* group, int local) {
  const int size = group->size;
  if ((Topology)step->shape == PAIRS) {
    const int partner = pair_partner(step, group, local);
    return (Neighbours){partner, partner};
  }
  if (size < 2) return (Neighbours){MPI_PROC_NULL, MPI_PROC_NULL};
  const int shift = 1 + derive_below(step->salt, 's', 0, size - 1);
  if ((Topology)step->shape == RING) return (Neighbours){(local - shift + size) % size, (local + shift) % size};
  return (Neighbours){local - shift >= 0 ? local - shift : MPI_PROC_NULL,
                      local + shift < size ? local + shift : MPI_PROC_NULL};
}

static int world_of(const Group* group, int local) { return local == MPI_PROC_NULL ? -1 : group->world[local]; }

static int weighted_kind(Rng* rng) {
  int total = 0;
  for (int kind = 0; kind < KIND_COUNT; ++kind) total += kKindWeights[kind] * options.kinds[kind];
  int draw = rng_below(rng, total);
  for (int kind = 0; kind < KIND_COUNT; ++kind) {
    const int weight = kKindWeights[kind] * options.kinds[kind];
    if (draw < weight) return kind;
    draw -= weight;
  }
  return EXCHANGE;
}

static int random_count(Rng* rng) {
  static const int kCounts[] = {1, 1, 3, 8, 16, 100, 256, 4096};
  return kCounts[rng_below(rng, (int)(sizeof kCounts / sizeof kCounts[0]))];
}

static void make_schedule(Rng* schedule_rng, Rng* delay_rng) {
  /* Steps past options.steps are for a bug that finds nothing to break before. */
  for (int s = 0; s < kMaxSteps; ++s) {
    Step* step = &schedule[s];
    step->kind = (Kind)weighted_kind(schedule_rng);
    step->comm = (CommIndex)rng_below(schedule_rng, COMM_COUNT);
    step->count = random_count(schedule_rng);
    switch (step->kind) {
      case ROOTED: step->shape = rng_below(schedule_rng, ROOTED_COUNT); break;
      case UNROOTED: step->shape = rng_below(schedule_rng, UNROOTED_COUNT); break;
      case FAN_IN: step->shape = 0; break;
      case NONBLOCKING_COLLECTIVES: step->shape = 0; break;
      default: step->shape = rng_below(schedule_rng, TOPOLOGY_COUNT); break;
    }
    switch (step->kind) {
      case EXCHANGE: step->messages = 1 + rng_below(schedule_rng, 2); break;
      case SSEND_PAIRS: step->messages = 2 + rng_below(schedule_rng, 2); break; /* room for swapped receives */
      case PERSISTENT: step->messages = 2 + rng_below(schedule_rng, 3); break; /* iterations */
      case NONBLOCKING_COLLECTIVES: step->messages = 1 + rng_below(schedule_rng, 3); break;
      default: step->messages = 1; break;
    }
    step->salt = rng_next(schedule_rng);
    /* The delay stream is separate: delays leave the schedule unchanged. */
    step->delayed_rank = -1;
    if (rng_below(delay_rng, 100) < options.delay_percent) {
      const int pick = (int)(rng_next(delay_rng) % (uint64_t)world_size);
      /* The first rank from `pick` on that takes part in the step. */
      for (int k = 0; k < world_size && step->delayed_rank < 0; ++k)
        if (comms[step->comm].color[(pick + k) % world_size] >= 0) step->delayed_rank = (pick + k) % world_size;
    }
  }
}

static void describe_step(int s, char* text, size_t size) {
  const Step* step = &schedule[s];
  const char* shape = "";
  switch (step->kind) {
    case ROOTED: shape = kRootedNames[step->shape]; break;
    case UNROOTED: shape = kUnrootedNames[step->shape]; break;
    case EXCHANGE:
    case SSEND_PAIRS:
    case SENDRECV:
    case PERSISTENT: shape = kTopologyNames[step->shape]; break;
    default: break;
  }
  snprintf(text, size, "step %d: %s%s%s on %s, %d x %d ints", s, kKindNames[step->kind], shape[0] ? " " : "", shape,
           kCommNames[step->comm], step->messages, step->count);
}

/* ---- The bug ------------------------------------------------------------ */

typedef struct {
  Bug choices[kMaxSteps * kMaxRanks];
  int count;
} BugChoices;

static void add_choice(BugChoices* choices, int step, int victim, int culprit, int message) {
  choices->choices[choices->count++] = (Bug){options.bug, step, victim, culprit, message};
}

/* Sends whose loss leaves the receiver blocked: nonblocking exchanges whose
 * receiver completes with a blocking call, and fan-ins to a root that
 * receives with MPI_Recv or a blocking completion. */
static void missing_send_choices(int s, const Group* group, BugChoices* choices) {
  const Step* step = &schedule[s];
  if (step->kind == EXCHANGE) {
    for (int local = 0; local < group->size; ++local) {
      const Neighbours mine = neighbours(step, group, local);
      if (mine.left != MPI_PROC_NULL && is_blocking(mode_of(step, group->world[local])))
        add_choice(choices, s, group->world[local], group->world[mine.left],
                   derive_below(step->salt, 'b', 0, step->messages));
    }
  } else if (step->kind == FAN_IN) {
    const int root = root_of(step, group);
    if (receives_one_by_one(step, group->world[root]) || is_blocking(mode_of(step, group->world[root])))
      for (int local = 0; local < group->size; ++local)
        if (local != root) add_choice(choices, s, group->world[root], group->world[local], 0);
  }
}

static void bug_choices_in_group(int s, const Group* group, BugChoices* choices) {
  const Step* step = &schedule[s];
  switch (options.bug) {
    case BUG_MISSING_SEND: missing_send_choices(s, group, choices); break;
    case BUG_SWAPPED_RECEIVES:
      if (step->kind == SSEND_PAIRS)
        for (int local = 0; local < group->size; ++local) {
          const int partner = pair_partner(step, group, local);
          if (partner != MPI_PROC_NULL) add_choice(choices, s, group->world[local], group->world[partner], 0);
        }
      break;
    case BUG_SKIPPED_COLLECTIVE:
      if (step->kind == UNROOTED && group->size >= 2)
        for (int local = 0; local < group->size; ++local) add_choice(choices, s, -1, group->world[local], 0);
      break;
    default: break;
  }
}

static void choices_in_step(int s, BugChoices* choices) {
  /* Each group once: by its lowest world rank. */
  for (int w = 0; w < world_size; ++w) {
    Group group;
    if (group_of(schedule[s].comm, w, &group) && group.world[0] == w) bug_choices_in_group(s, &group, choices);
  }
}

/* A step of the schedule that the bug can break; when none of the steps to
 * run has one, the first later step of the schedule that has. */
static void choose_bug(Rng* bug_rng) {
  static BugChoices choices;
  for (int s = 0; s < options.steps; ++s) choices_in_step(s, &choices);
  for (int s = options.steps; s < kMaxSteps && choices.count == 0; ++s) choices_in_step(s, &choices);
  if (choices.count == 0)
    internal_error("seed %" PRIu64 " has no step that --bug %s can break", options.seed, kBugNames[options.bug]);
  bug = choices.choices[rng_below(bug_rng, choices.count)];
}

/* The call world rank `who` hangs in, and the function of this program that
 * makes it: its part of the broken step, else the final reduction. */
typedef struct {
  const char* call;
  const char* function;
} HangingCall;

static HangingCall expected_call(int who) {
  const Step* step = &schedule[bug.step];
  switch (bug.kind) {
    case BUG_MISSING_SEND:
      if (who != bug.victim) break;
      if (step->kind == FAN_IN && receives_one_by_one(step, who)) return (HangingCall){"MPI_Recv", "run_fan_in"};
      return (HangingCall){kModeCalls[mode_of(step, who)], "complete"};
    case BUG_SWAPPED_RECEIVES:
      if (who == bug.victim) return (HangingCall){"MPI_Recv", "receive_messages"};
      if (who == bug.culprit) return (HangingCall){"MPI_Ssend", "ssend_messages"};
      break;
    case BUG_SKIPPED_COLLECTIVE: {
      Group group, culprits;
      group_of(step->comm, bug.culprit, &culprits);
      if (who != bug.culprit && group_of(step->comm, who, &group) && group.world[0] == culprits.world[0])
        return (HangingCall){kUnrootedNames[step->shape], "run_unrooted"};
      break;
    }
    default: break;
  }
  return (HangingCall){"MPI_Allreduce", "main"};
}

static void announce_bug(void) {
  char text[200];
  describe_step(bug.step, text, sizeof text);
  printf("bug %s in %s: victim %d, culprit %d\n", kBugNames[bug.kind], text, bug.victim, bug.culprit);
  for (int w = 0; w < world_size; ++w) {
    const HangingCall hanging = expected_call(w);
    printf("expect %d %s %s\n", w, hanging.call, hanging.function);
  }
  fflush(stdout);
}

/* ---- Requests ----------------------------------------------------------- */

/* An array of requests as a program builds it: its own requests at random
 * places, MPI_REQUEST_NULL in between. */
typedef struct {
  MPI_Request requests[kMaxRequests];
  MPI_Status statuses[kMaxRequests];
  int place[kMaxRequests]; /* where the n-th added request is */
  int count;
  int added;
} Requests;

/* Room for `own` requests and a few MPI_REQUEST_NULL, in an order drawn from `salt`. */
static void requests_init(Requests* set, int own, uint64_t salt) {
  const int nulls = derive_below(salt, 'n', (uint64_t)world_rank, 3);
  set->count = own + nulls;
  set->added = 0;
  for (int i = 0; i < set->count; ++i) {
    set->requests[i] = MPI_REQUEST_NULL;
    set->place[i] = i;
  }
  for (int i = set->count - 1; i > 0; --i) {
    const int j = derive_below(salt, 'o', ((uint64_t)world_rank << 16) | (uint64_t)i, i + 1);
    const int swap = set->place[i];
    set->place[i] = set->place[j];
    set->place[j] = swap;
  }
}

/* The next request's slot; the caller posts into it. */
static int requests_add(Requests* set) { return set->place[set->added++]; }

static void complete(Requests* set, Mode mode) {
  const int n = set->count;
  int indices[kMaxRequests];
  MPI_Status statuses[kMaxRequests];
  switch (mode) {
    case WAIT_EACH:
      for (int i = 0; i < n; ++i) MPI_Wait(&set->requests[i], &set->statuses[i]);
      break;
    case WAITALL: MPI_Waitall(n, set->requests, set->statuses); break;
    case WAITANY_LOOP:
      for (;;) {
        int index = MPI_UNDEFINED;
        MPI_Status status;
        MPI_Waitany(n, set->requests, &index, &status);
        if (index == MPI_UNDEFINED) break;
        set->statuses[index] = status;
      }
      break;
    case WAITSOME_LOOP:
      for (;;) {
        int done = MPI_UNDEFINED;
        MPI_Waitsome(n, set->requests, &done, indices, statuses);
        if (done == MPI_UNDEFINED) break;
        for (int k = 0; k < done; ++k) set->statuses[indices[k]] = statuses[k];
      }
      break;
    case TEST_EACH:
      for (int i = 0; i < n; ++i)
        for (int flag = 0; !flag;) MPI_Test(&set->requests[i], &flag, &set->statuses[i]);
      break;
    case TESTALL:
      for (int flag = 0; !flag;) MPI_Testall(n, set->requests, &flag, set->statuses);
      break;
    case TESTANY_LOOP:
      for (;;) {
        int index = MPI_UNDEFINED, flag = 0;
        MPI_Status status;
        MPI_Testany(n, set->requests, &index, &flag, &status);
        if (flag && index == MPI_UNDEFINED) break;
        if (flag) set->statuses[index] = status;
      }
      break;
    case TESTSOME_LOOP:
      for (;;) {
        int done = MPI_UNDEFINED;
        MPI_Testsome(n, set->requests, &done, indices, statuses);
        if (done == MPI_UNDEFINED) break;
        for (int k = 0; k < done; ++k) set->statuses[indices[k]] = statuses[k];
      }
      break;
    default: break;
  }
}

/* ---- Checks of received messages ---------------------------------------- */

static void fill(int* buffer, int count, uint64_t salt, int what, int from, int to) {
  for (int i = 0; i < count; ++i) buffer[i] = value_of(salt, what, from, to, i);
}

/* A message from local rank `source` (MPI_PROC_NULL: none) of `group`. */
static void check_message(int s, const Group* group, const MPI_Status* status, const int* buffer, int count,
                          int source, int tag, int what) {
  /* Nothing comes from MPI_PROC_NULL, and MPICH 4.0 leaves the status of a
   * nonblocking receive from it unset: nothing to check. */
  if (source == MPI_PROC_NULL) return;
  int received = -1;
  MPI_Get_count(status, MPI_INT, &received);
  if (status->MPI_SOURCE != source || status->MPI_TAG != tag || received != count) {
    data_error(s, "message %d: source %d, tag %d, %d ints instead of source %d, tag %d, %d ints", what,
               status->MPI_SOURCE, status->MPI_TAG, received, source, tag, count);
    return;
  }
  for (int i = 0; i < count; ++i)
    check_value(s, buffer[i], value_of(schedule[s].salt, what, group->world[source], world_rank, i), "message");
}

/* ---- Point-to-point steps ----------------------------------------------- */

static int skips_send(int s, int to_world, int message) {
  return bug.kind == BUG_MISSING_SEND && bug.step == s && bug.culprit == world_rank && bug.victim == to_world &&
         bug.message == message;
}

static void run_exchange(int s, const Group* group) {
  const Step* step = &schedule[s];
  const Neighbours next = neighbours(step, group, group->me);
  const int count = step->count, messages = step->messages;
  const int source = next.left != MPI_PROC_NULL && uses_any_source(step, world_rank) ? MPI_ANY_SOURCE : next.left;
  int* in = calloc((size_t)(messages * count), sizeof(int));
  int* out = calloc((size_t)(messages * count), sizeof(int));
  Requests set;
  int receives[kMaxMessages];
  requests_init(&set, 2 * messages, step->salt);
  for (int j = 0; j < messages; ++j) {
    receives[j] = requests_add(&set);
    MPI_Irecv(in + j * count, count, MPI_INT, source, tag_base(s) + j, group->comm, &set.requests[receives[j]]);
    const int send = requests_add(&set);
    if (skips_send(s, world_of(group, next.right), j)) continue;
    fill(out + j * count, count, step->salt, j, world_rank, world_of(group, next.right));
    if (derive_below(step->salt, 'S', ((uint64_t)world_rank << 8) | (uint64_t)j, 2))
      MPI_Issend(out + j * count, count, MPI_INT, next.right, tag_base(s) + j, group->comm, &set.requests[send]);
    else
      MPI_Isend(out + j * count, count, MPI_INT, next.right, tag_base(s) + j, group->comm, &set.requests[send]);
  }
  complete(&set, mode_of(step, world_rank));
  for (int j = 0; j < messages; ++j)
    check_message(s, group, &set.statuses[receives[j]], in + j * count, count, next.left, tag_base(s) + j, j);
  free(in);
  free(out);
}

static void run_fan_in(int s, const Group* group) {
  const Step* step = &schedule[s];
  const int root = root_of(step, group), count = step->count, tag = tag_base(s);
  if (group->me != root) {
    if (skips_send(s, group->world[root], 0)) return;
    int* out = calloc((size_t)count, sizeof(int));
    fill(out, count, step->salt, 0, world_rank, group->world[root]);
    MPI_Request request;
    switch (derive_below(step->salt, 'S', (uint64_t)world_rank, 4)) {
      case 0: MPI_Send(out, count, MPI_INT, root, tag, group->comm); break;
      case 1: MPI_Ssend(out, count, MPI_INT, root, tag, group->comm); break;
      case 2:
        MPI_Isend(out, count, MPI_INT, root, tag, group->comm, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        break;
      default:
        MPI_Issend(out, count, MPI_INT, root, tag, group->comm, &request);
        for (int flag = 0; !flag;) MPI_Test(&request, &flag, MPI_STATUS_IGNORE);
        break;
    }
    free(out);
    return;
  }
  /* Counted messages, one from every other rank, in any order. */
  const int senders = group->size - 1;
  int* in = calloc((size_t)(senders * count) + 1, sizeof(int));
  Requests set;
  requests_init(&set, senders, step->salt);
  const int blocking_receives = receives_one_by_one(step, world_rank);
  for (int k = 0; k < senders; ++k) {
    const int slot = requests_add(&set);
    if (blocking_receives)
      MPI_Recv(in + k * count, count, MPI_INT, MPI_ANY_SOURCE, tag, group->comm, &set.statuses[slot]);
    else
      MPI_Irecv(in + k * count, count, MPI_INT, MPI_ANY_SOURCE, tag, group->comm, &set.requests[slot]);
  }
  if (!blocking_receives) complete(&set, mode_of(step, world_rank));
  int seen[kMaxRanks] = {0};
  for (int k = 0; k < senders; ++k) {
    const MPI_Status* status = &set.statuses[set.place[k]];
    const int source = status->MPI_SOURCE;
    if (source < 0 || source >= group->size || source == root || seen[source]++) {
      data_error(s, "fan-in message %d from unexpected source %d", k, source);
      continue;
    }
    check_message(s, group, status, in + k * count, count, source, tag, 0);
  }
  free(in);
}

static void ssend_messages(int s, const Group* group, int to, int first_tag) {
  const Step* step = &schedule[s];
  int* out = calloc((size_t)step->count, sizeof(int));
  for (int j = 0; j < step->messages; ++j) {
    fill(out, step->count, step->salt, first_tag + j, world_rank, group->world[to]);
    MPI_Ssend(out, step->count, MPI_INT, to, tag_base(s) + first_tag + j, group->comm);
  }
  free(out);
}

static void receive_messages(int s, const Group* group, int from, int first_tag) {
  const Step* step = &schedule[s];
  const int swapped = bug.kind == BUG_SWAPPED_RECEIVES && bug.step == s && bug.victim == world_rank;
  const int source = uses_any_source(step, world_rank) ? MPI_ANY_SOURCE : from;
  int* in = calloc((size_t)step->count, sizeof(int));
  for (int j = 0; j < step->messages; ++j) {
    /* The bug takes the second message first: its sender is still blocked in sending the first. */
    const int message = swapped && j < 2 ? 1 - j : j;
    MPI_Status status;
    MPI_Recv(in, step->count, MPI_INT, source, tag_base(s) + first_tag + message, group->comm, &status);
    check_message(s, group, &status, in, step->count, from, tag_base(s) + first_tag + message, first_tag + message);
  }
  free(in);
}

static void run_ssend_pairs(int s, const Group* group) {
  const int partner = pair_partner(&schedule[s], group, group->me);
  if (partner == MPI_PROC_NULL) return;
  if (is_first_of_pair(&schedule[s], group, group->me, partner)) {
    ssend_messages(s, group, partner, 0);
    receive_messages(s, group, partner, kReverseTags);
  } else {
    receive_messages(s, group, partner, 0);
    ssend_messages(s, group, partner, kReverseTags);
  }
}

static void run_sendrecv(int s, const Group* group) {
  const Step* step = &schedule[s];
  const Neighbours next = neighbours(step, group, group->me);
  const int count = step->count, tag = tag_base(s);
  const int source = next.left != MPI_PROC_NULL && uses_any_source(step, world_rank) ? MPI_ANY_SOURCE : next.left;
  int* out = calloc((size_t)count, sizeof(int));
  int* in = calloc((size_t)count, sizeof(int));
  fill(out, count, step->salt, 0, world_rank, world_of(group, next.right));
  MPI_Status status;
  if (derive_below(step->salt, 'S', (uint64_t)world_rank, 2)) {
    MPI_Sendrecv(out, count, MPI_INT, next.right, tag, in, count, MPI_INT, source, tag, group->comm, &status);
  } else {
    MPI_Sendrecv_replace(out, count, MPI_INT, next.right, tag, source, tag, group->comm, &status);
    memcpy(in, out, (size_t)count * sizeof(int));
  }
  check_message(s, group, &status, in, count, next.left, tag, 0);
  free(out);
  free(in);
}

/* A persistent send and receive started `messages` times, with a persistent
 * receive that is never started (inactive) in the same array. */
static void run_persistent(int s, const Group* group) {
  const Step* step = &schedule[s];
  const Neighbours next = neighbours(step, group, group->me);
  const int count = step->count, tag = tag_base(s);
  const int source = next.left != MPI_PROC_NULL && uses_any_source(step, world_rank) ? MPI_ANY_SOURCE : next.left;
  int* out = calloc((size_t)count, sizeof(int));
  int* in = calloc((size_t)count, sizeof(int));
  int spare_buffer = 0;
  Requests set;
  requests_init(&set, 3, step->salt);
  const int receive = requests_add(&set), send = requests_add(&set), spare = requests_add(&set);
  MPI_Recv_init(in, count, MPI_INT, source, tag, group->comm, &set.requests[receive]);
  if (derive_below(step->salt, 'S', (uint64_t)world_rank, 2))
    MPI_Ssend_init(out, count, MPI_INT, next.right, tag, group->comm, &set.requests[send]);
  else
    MPI_Send_init(out, count, MPI_INT, next.right, tag, group->comm, &set.requests[send]);
  MPI_Recv_init(&spare_buffer, 1, MPI_INT, MPI_ANY_SOURCE, tag + kSpareTag, group->comm, &set.requests[spare]);
  const int start_together = derive_below(step->salt, 'T', (uint64_t)world_rank, 2);
  for (int iteration = 0; iteration < step->messages; ++iteration) {
    fill(out, count, step->salt, iteration, world_rank, world_of(group, next.right));
    if (start_together) {
      /* Starting leaves the handles as they are: a copy of them will do. */
      MPI_Request both[2] = {set.requests[receive], set.requests[send]};
      MPI_Startall(2, both);
    } else {
      MPI_Start(&set.requests[send]);
      MPI_Start(&set.requests[receive]);
    }
    complete(&set, mode_of(step, world_rank));
    check_message(s, group, &set.statuses[receive], in, count, next.left, tag, iteration);
  }
  MPI_Request_free(&set.requests[receive]);
  MPI_Request_free(&set.requests[send]);
  MPI_Request_free(&set.requests[spare]);
  free(out);
  free(in);
}

/* ---- Collective steps --------------------------------------------------- */

static int reduce_contribution(uint64_t salt, int who, int i) { return value_of(salt, 0, who, -1, i) & 0xffff; }

typedef enum { OP_SUM, OP_MAX, OP_BXOR, OP_COUNT } ReduceOperation;

static ReduceOperation reduce_operation(const Step* step) {
  return (ReduceOperation)derive_below(step->salt, 'O', 0, OP_COUNT);
}

static MPI_Op mpi_op(ReduceOperation op) { return op == OP_SUM ? MPI_SUM : op == OP_MAX ? MPI_MAX : MPI_BXOR; }

static int combine(ReduceOperation op, int a, int b) {
  if (op == OP_SUM) return a + b;
  if (op == OP_MAX) return a > b ? a : b;
  return a ^ b;
}

/* Element i of the reduction over the group of contributions drawn from `salt`. */
static int reduced(uint64_t salt, const Group* group, ReduceOperation op, int i) {
  int result = reduce_contribution(salt, group->world[0], i);
  for (int l = 1; l < group->size; ++l) result = combine(op, result, reduce_contribution(salt, group->world[l], i));
  return result;
}

static void run_rooted(int s, const Group* group) {
  const Step* step = &schedule[s];
  const int root = root_of(step, group), count = step->count, size = group->size;
  const int world_root = group->world[root];
  int* mine = calloc((size_t)count, sizeof(int));
  int* all = calloc((size_t)(size * count), sizeof(int));
  switch ((RootedOperation)step->shape) {
    case BCAST:
      if (group->me == root) fill(mine, count, step->salt, 0, world_root, -1);
      MPI_Bcast(mine, count, MPI_INT, root, group->comm);
      for (int i = 0; i < count; ++i) check_value(s, mine[i], value_of(step->salt, 0, world_root, -1, i), "MPI_Bcast");
      break;
    case REDUCE: {
      const ReduceOperation op = reduce_operation(step);
      for (int i = 0; i < count; ++i) mine[i] = reduce_contribution(step->salt, world_rank, i);
      MPI_Reduce(mine, all, count, MPI_INT, mpi_op(op), root, group->comm);
      if (group->me == root)
        for (int i = 0; i < count; ++i) check_value(s, all[i], reduced(step->salt, group, op, i), "MPI_Reduce");
      break;
    }
    case GATHER:
      fill(mine, count, step->salt, 0, world_rank, world_root);
      MPI_Gather(mine, count, MPI_INT, all, count, MPI_INT, root, group->comm);
      if (group->me == root)
        for (int l = 0; l < size; ++l)
          for (int i = 0; i < count; ++i)
            check_value(s, all[l * count + i], value_of(step->salt, 0, group->world[l], world_root, i), "MPI_Gather");
      break;
    default: /* SCATTER */
      if (group->me == root)
        for (int l = 0; l < size; ++l) fill(all + l * count, count, step->salt, 0, world_root, group->world[l]);
      MPI_Scatter(all, count, MPI_INT, mine, count, MPI_INT, root, group->comm);
      for (int i = 0; i < count; ++i)
        check_value(s, mine[i], value_of(step->salt, 0, world_root, world_rank, i), "MPI_Scatter");
      break;
  }
  free(mine);
  free(all);
}

static void run_unrooted(int s, const Group* group) {
  const Step* step = &schedule[s];
  if (bug.kind == BUG_SKIPPED_COLLECTIVE && bug.step == s && bug.culprit == world_rank) return;
  const int count = step->count, size = group->size;
  int* mine = calloc((size_t)(size * count), sizeof(int));
  int* all = calloc((size_t)(size * count), sizeof(int));
  switch ((UnrootedOperation)step->shape) {
    case BARRIER: MPI_Barrier(group->comm); break;
    case ALLREDUCE: {
      const ReduceOperation op = reduce_operation(step);
      for (int i = 0; i < count; ++i) mine[i] = reduce_contribution(step->salt, world_rank, i);
      MPI_Allreduce(mine, all, count, MPI_INT, mpi_op(op), group->comm);
      for (int i = 0; i < count; ++i) check_value(s, all[i], reduced(step->salt, group, op, i), "MPI_Allreduce");
      break;
    }
    case ALLGATHER:
      fill(mine, count, step->salt, 0, world_rank, -1);
      MPI_Allgather(mine, count, MPI_INT, all, count, MPI_INT, group->comm);
      for (int l = 0; l < size; ++l)
        for (int i = 0; i < count; ++i)
          check_value(s, all[l * count + i], value_of(step->salt, 0, group->world[l], -1, i), "MPI_Allgather");
      break;
    default: /* ALLTOALL */
      for (int l = 0; l < size; ++l) fill(mine + l * count, count, step->salt, 0, world_rank, group->world[l]);
      MPI_Alltoall(mine, count, MPI_INT, all, count, MPI_INT, group->comm);
      for (int l = 0; l < size; ++l)
        for (int i = 0; i < count; ++i)
          check_value(s, all[l * count + i], value_of(step->salt, 0, group->world[l], world_rank, i), "MPI_Alltoall");
      break;
  }
  free(mine);
  free(all);
}

/* `messages` nonblocking collectives in flight together, started in the same
 * order everywhere, completed in the rank's own way. */
static void run_nonblocking_collectives(int s, const Group* group) {
  const Step* step = &schedule[s];
  const int count = step->count;
  int* buffers[kMaxMessages];
  int* results[kMaxMessages];
  NonblockingOperation operations[kMaxMessages];
  Requests set;
  requests_init(&set, step->messages, step->salt);
  const ReduceOperation op = reduce_operation(step);
  for (int k = 0; k < step->messages; ++k) {
    operations[k] = (NonblockingOperation)derive_below(step->salt, 'N', (uint64_t)k, NONBLOCKING_COUNT);
    buffers[k] = calloc((size_t)count, sizeof(int));
    results[k] = calloc((size_t)count, sizeof(int));
    MPI_Request* request = &set.requests[requests_add(&set)];
    switch (operations[k]) {
      case IBARRIER: MPI_Ibarrier(group->comm, request); break;
      case IALLREDUCE:
        for (int i = 0; i < count; ++i) buffers[k][i] = reduce_contribution(step->salt ^ (uint64_t)k, world_rank, i);
        MPI_Iallreduce(buffers[k], results[k], count, MPI_INT, mpi_op(op), group->comm, request);
        break;
      default: { /* IBCAST */
        const int root = derive_below(step->salt, 'B', (uint64_t)k, group->size);
        if (group->me == root) fill(buffers[k], count, step->salt, k, group->world[root], -1);
        MPI_Ibcast(buffers[k], count, MPI_INT, root, group->comm, request);
        break;
      }
    }
  }
  complete(&set, mode_of(step, world_rank));
  for (int k = 0; k < step->messages; ++k) {
    if (operations[k] == IALLREDUCE) {
      for (int i = 0; i < count; ++i)
        check_value(s, results[k][i], reduced(step->salt ^ (uint64_t)k, group, op, i), "MPI_Iallreduce");
    } else if (operations[k] == IBCAST) {
      const int root = derive_below(step->salt, 'B', (uint64_t)k, group->size);
      for (int i = 0; i < count; ++i)
        check_value(s, buffers[k][i], value_of(step->salt, k, group->world[root], -1, i), "MPI_Ibcast");
    }
    free(buffers[k]);
    free(results[k]);
  }
}

static void run_step(int s) {
  const Step* step = &schedule[s];
  Group group;
  if (!group_of(step->comm, world_rank, &group)) return;
  if (step->delayed_rank == world_rank) compute_for(options.delay_seconds);
  switch (step->kind) {
    case EXCHANGE: run_exchange(s, &group); break;
    case FAN_IN: run_fan_in(s, &group); break;
    case SSEND_PAIRS: run_ssend_pairs(s, &group); break;
    case SENDRECV: run_sendrecv(s, &group); break;
    case PERSISTENT: run_persistent(s, &group); break;
    case ROOTED: run_rooted(s, &group); break;
    case UNROOTED: run_unrooted(s, &group); break;
    default: run_nonblocking_collectives(s, &group); break;
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  world_rank = world_rank_checked(2, kMaxRanks);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  options = parse_options(argc, argv);

  Rng schedule_rng = {options.seed};
  Rng delay_rng = {mix(options.seed ^ 0x64656c6179ULL)};
  Rng bug_rng = {mix(options.seed ^ 0x627567ULL)};
  create_comms(&schedule_rng);
  make_schedule(&schedule_rng, &delay_rng);
  int last_step = options.steps - 1;
  if (options.bug != BUG_NONE) {
    choose_bug(&bug_rng);
    last_step = bug.step;
  }

  if (world_rank == 0) {
    int delays = 0;
    for (int s = 0; s <= last_step; ++s) delays += schedule[s].delayed_rank >= 0;
    fprintf(stderr, "random_program: seed %" PRIu64 ", %d ranks, %d steps, %d delays of %g s\n", options.seed,
            world_size, last_step + 1, delays, options.delay_seconds);
    if (options.print_schedule)
      for (int s = 0; s <= last_step; ++s) {
        char text[200];
        describe_step(s, text, sizeof text);
        fprintf(stderr, "random_program: %s%s\n", text, schedule[s].delayed_rank >= 0 ? " (delayed)" : "");
      }
    if (bug.kind != BUG_NONE) announce_bug();
  }

  for (int s = 0; s <= last_step; ++s) run_step(s);

  uint64_t totals[2] = {checksum, errors};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_UINT64_T, MPI_SUM, final_comm);
  free_comms();
  if (world_rank == 0) {
    if (totals[1] == 0)
      printf("ok %016" PRIx64 "\n", totals[0]);
    else
      printf("FAILED: %" PRIu64 " wrong values\n", totals[1]);
  }
  MPI_Finalize();
  return totals[1] == 0 ? 0 : 1;
}
