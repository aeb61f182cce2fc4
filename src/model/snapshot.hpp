// What one rank tells rank 0 about itself when a report is made, and what the
// monitor concluded from all of them. This is the whole data model that the
// report module formats; it knows nothing of MPI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/rank_set.hpp"

namespace mpisentry {

// One symbolized stack frame.
struct Frame {
  std::string function;  // demangled name, "??" when unknown
  std::string file;      // source file, empty without debug info
  int line = 0;          // 0 when unknown
  std::string module;    // executable or shared object that holds the frame
  bool operator==(const Frame&) const = default;
};

// A point-to-point operation that a blocked thread waits on, or that a rank
// has started and not completed. A send and the receive that matches it,
// both posted, are a transfer under way (a large or slow message), not a
// wait: MPI completes one of them whatever else their ranks do.
struct PendingMessage {
  static constexpr int kAny = -1;  // MPI_ANY_SOURCE as peer, MPI_ANY_TAG as tag
  bool send = false;
  int peer = kAny;                 // MPI_COMM_WORLD rank
  int tag = kAny;
  std::uint64_t comm_id = 0;       // the communicator's identity, the same on every rank
  // Of a blocked thread's parts: a transfer under way on this one may be all
  // its call still needs (the call's one operation, one of a Waitany's, or a
  // half of a send-receive whose other half may be done), so that once it is
  // matched the call waits for nothing definite.
  bool may_end_call = false;
  bool operator==(const PendingMessage&) const = default;
};

// How many messages, and the wrapping sums of their tags and of the squares
// of their tags: what one side of a pair of ranks counted of their messages.
struct TagTally {
  std::uint64_t count = 0;
  std::uint64_t sum = 0;
  std::uint64_t squares = 0;
  bool operator==(const TagTally&) const = default;
};

// One peer's point-to-point traffic with a rank on one communicator, as the
// rank counted it: the messages it started to the peer and those it matched
// from it. What a sender started less what its receiver matched is in flight.
struct MessageTally {
  std::uint64_t comm_id = 0;
  int peer = -1;  // MPI_COMM_WORLD rank
  TagTally sent;
  TagTally matched;
  bool operator==(const MessageTally&) const = default;
};

enum class RankState : std::uint8_t {
  Running,     // computing outside MPI, or its calls return
  Blocked,     // inside one blocking MPI call that has not returned
  Polling,     // calling MPI_Test-like functions that complete nothing
  Finalizing,  // inside MPI_Finalize, waiting for the other ranks
};

// How a blocked thread's wait can be satisfied by the ranks it waits for.
enum class WaitMode : std::uint8_t {
  None,  // waits for nothing the checker can read (running, an unknown request)
  All,   // AND: every rank listed must act (Recv from a rank, Waitall, Barrier)
  Any,   // OR: one of them is enough (ANY_SOURCE, Waitany, Waitsome)
};

// A collective call as every member made it, for matching the k-th
// collective on a communicator across its members.
struct CollectiveCall {
  std::uint64_t comm_id = 0;   // 0: not in a collective
  std::uint64_t sequence = 0;  // 1 for the communicator's first collective on this rank
  std::string function;        // "MPI_Bcast"
  int root = -1;               // MPI_COMM_WORLD rank of the root; -1 when unrooted
  std::string op;              // "MPI_SUM", "a user-defined operation"; empty when none
  bool operator==(const CollectiveCall&) const = default;
};

// A nonblocking collective still incomplete that a thread's Wait or Test
// waits on: it waits for what its blocking twin waits for, and no longer for
// the members that have started it (entered collective `call.sequence`).
struct StartedCollective {
  CollectiveCall call;
  RankSet waits_for;           // definite
  RankSet possibly_waits_for;  // possible
  bool operator==(const StartedCollective&) const = default;
};

// One thread of a rank that has called MPI.
struct ThreadSnapshot {
  int id = 0;  // 0: the thread that initialized MPI; others numbered by their first MPI call
  RankState state = RankState::Running;
  double seconds = 0;    // blocked for (Blocked, Finalizing) or without progress (Polling)
  std::string function;  // "MPI_Recv": the call it is in, or last polled with
  std::string call;      // the call with its arguments, as printed in reports
  // Definite waits: they hold in every conforming MPI implementation, and
  // only requests confirmed incomplete count. For Finalizing, the analysis
  // fills in the ranks not yet there.
  WaitMode wait_mode = WaitMode::None;
  RankSet waits_for;
  // Possible waits (AND): they hold only where MPI chooses to synchronize,
  // such as a Bcast leaf waiting for another leaf. Never part of a HARD verdict.
  RankSet possibly_waits_for;
  // A passive-target lock, unlock or flush on this window (its id): of the
  // possible waits, only those for a rank that holds a lock on the window
  // or runs outside MPI hold; a target inside any MPI call makes progress.
  std::uint64_t lock_window = 0;
  std::string wait_reason;  // the rule, in words: "MPI_Bcast leaf waits for its root, rank 0"
  CollectiveCall collective;  // the blocking collective it is in
  std::vector<StartedCollective> started_collectives;  // its Wait's or Test's nonblocking collectives
  // Blocked in a send, or on the request of a send, that the potential-deadlock
  // mode made synchronous.
  bool converted_send = false;
  std::vector<PendingMessage> messages;  // the call's point-to-point operations, for matching
  std::vector<Frame> stack;              // innermost first; checker, MPI and libc frames left out
  bool operator==(const ThreadSnapshot&) const = default;
};

// How far one communicator's collectives have come on one rank.
struct CollectiveCount {
  std::uint64_t comm_id = 0;
  std::uint64_t entered = 0;  // collectives entered on it so far, the current one included
  // The functions of the last kRecentKept collectives entered (the API's
  // function ids, a large-count twin as its base), 16 bits each, the latest
  // lowest: what a member called as collective #k after it left it.
  std::uint64_t recent = 0;
  static constexpr std::uint64_t kRecentKept = 4;
  static constexpr std::uint64_t add_recent(std::uint64_t recent, std::uint16_t function) {
    return (recent << 16) | function;
  }
  // The function id of collective #sequence, 0 when not kept.
  constexpr std::uint16_t function_of(std::uint64_t sequence) const {
    if (sequence == 0 || sequence > entered || entered - sequence >= kRecentKept) return 0;
    return static_cast<std::uint16_t>(recent >> (16 * (entered - sequence)));
  }
  bool operator==(const CollectiveCount&) const = default;
};

struct RankSnapshot {
  int rank = -1;  // MPI_COMM_WORLD rank
  std::string host;
  int pid = 0;
  // Blocked only when every thread that has called MPI is blocked in MPI;
  // Running when one of them runs.
  RankState state = RankState::Running;
  double seconds = 0;  // the least of its threads' seconds
  // Changes whenever any thread of the rank enters, starts or completes
  // anything: equal in two looks means no progress in between.
  std::uint64_t activity = 0;
  // The status a rank passed to exit() (as the process will report it, 0 to
  // 255) when it exits without MPI_Finalize; kNotExiting otherwise.
  static constexpr int kNotExiting = -1;
  int exit_status = kNotExiting;
  std::vector<ThreadSnapshot> threads;  // those in MPI, and the rank's first thread; by id
  std::vector<CollectiveCount> collectives;  // by comm_id
  std::vector<std::uint64_t> locked_windows;  // windows where it holds a passive-target lock
  // Blocked with this many tasks outside MPI (threads outside it, threads
  // that never called it) proven held: asleep in waits only its own process
  // can end.
  std::uint32_t held_tasks = 0;
  // Its point-to-point operations started and not completed by a Wait or
  // Test (nonblocking, persistent and partitioned requests, freed ones too),
  // whatever its threads do now: each may end a peer's wait on this rank.
  // At most kListedPending; `pending_unlisted` when more, or when the checker
  // lost track of one: then any message may be pending.
  static constexpr std::size_t kListedPending = 256;
  std::vector<PendingMessage> pending;
  bool pending_unlisted = false;
  // Its messages started and matched, by (comm_id, peer), peers with none
  // left out, at most kListedTallies; `tallies_unlisted` when some could not
  // be kept or listed: then any of its messages may be in flight.
  static constexpr std::size_t kListedTallies = 4096;
  std::vector<MessageTally> tallies;
  bool tallies_unlisted = false;
  bool operator==(const RankSnapshot&) const = default;
};

// A thread of the job: (rank, thread id).
struct ThreadRef {
  int rank = -1;
  int thread = 0;
  bool operator==(const ThreadRef&) const = default;
  auto operator<=>(const ThreadRef&) const = default;
};

// An arc of the wait-for graph as the analysis used it: after completed
// requests, arrived collective members and transfers under way dropped out.
struct WaitArc {
  ThreadRef from;
  int to = -1;  // MPI_COMM_WORLD rank
  WaitMode mode = WaitMode::All;
  bool possible = false;  // a possible wait (warnings only)
  bool operator==(const WaitArc&) const = default;
};

// One deadlock of the core: a strongly connected part of the deadlocked
// wait-for graph, a cycle (AND) or a knot (OR). Separate parts are separate
// deadlocks: each must be fixed on its own.
struct DeadlockCycle {
  std::vector<int> ranks;  // ascending; in a knot, or cycles that share ranks, more than the cycle's
  std::vector<int> cycle;  // the shortest cycle through its lowest rank, in wait order, that rank repeated at the end
  bool operator==(const DeadlockCycle&) const = default;
};

// The monitor's reading of the wait-for graph.
struct DeadlockCore {
  std::vector<int> core;              // ranks of every cycle (AND) or knot (OR), ascending
  std::vector<DeadlockCycle> cycles;  // one per deadlock, by lowest rank
  std::vector<int> blocked_behind;    // stuck only because they wait for the core
  bool empty() const { return core.empty(); }
  bool operator==(const DeadlockCore&) const = default;
};

// A compact, exact text form used to gather snapshots to rank 0 over MPI.
std::string serialize(const RankSnapshot& snapshot);
// Throws std::invalid_argument on malformed input.
RankSnapshot deserialize(std::string_view bytes);

// One rank's part of the monitors' gather to rank 0: its snapshot and, for a
// report, where its threads' stacks are (`frames`: stacks::serialize'd, one
// per thread of the snapshot, in its order). The snapshot's serialize'd text
// as "<length>:<bytes>"; with stacks, then "<threads>;" and each thread's
// frames as "<length>:<bytes>".
struct GatheredRank {
  RankSnapshot snapshot;
  std::vector<std::string> frames;  // empty without stacks
};
std::string encode_gathered(const RankSnapshot& snapshot, bool with_stacks, const std::vector<std::string>& frames);
// Throws std::invalid_argument, saying what is wrong, on malformed input.
GatheredRank decode_gathered(std::string_view part, bool with_stacks);

const char* to_string(RankState state);
const char* to_string(WaitMode mode);

}  // namespace mpisentry
