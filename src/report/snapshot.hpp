// What one rank tells rank 0 about itself when a report is made, and what the
// monitor concluded from all of them. This is the whole data model that the
// report module formats; it knows nothing of MPI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry {

// One symbolized stack frame.
struct Frame {
  std::string function;  // demangled name, "??" when unknown
  std::string file;      // source file, empty without debug info
  int line = 0;          // 0 when unknown
  std::string module;    // executable or shared object that holds the frame
  bool operator==(const Frame&) const = default;
};

// A point-to-point operation that a blocked rank waits on. A send and the
// receive that matches it, both posted, are a transfer under way (a large or
// slow message), not a wait.
struct PendingMessage {
  static constexpr int kAny = -1;  // MPI_ANY_SOURCE as peer, MPI_ANY_TAG as tag
  bool send = false;
  int peer = kAny;                 // MPI_COMM_WORLD rank
  int tag = kAny;
  std::uint64_t comm_key = 0;      // the same for one communicator on every rank
  bool operator==(const PendingMessage&) const = default;
};

enum class RankState : std::uint8_t {
  Running,     // computing outside MPI, or its calls return
  Blocked,     // inside one blocking MPI call that has not returned
  Polling,     // calling MPI_Test-like functions that complete nothing
  Finalizing,  // inside MPI_Finalize, waiting for the other ranks
};

// How a blocked rank's wait can be satisfied by the ranks in waits_for.
enum class WaitMode : std::uint8_t {
  None,     // waits for nothing known (running, or an untracked request)
  All,      // AND: every rank in waits_for must act (Recv from a rank, Waitall, collective)
  Any,      // OR: one of them is enough (ANY_SOURCE, Waitany, Waitsome)
};

struct RankSnapshot {
  int rank = -1;  // MPI_COMM_WORLD rank
  std::string host;
  int pid = 0;
  RankState state = RankState::Running;
  double seconds = 0;        // blocked for (Blocked, Finalizing) or without progress (Polling)
  std::string function;      // "MPI_Recv": the call it is in, or last polled with
  std::string call;          // the call with its arguments, as printed in reports
  WaitMode wait_mode = WaitMode::None;
  std::vector<int> waits_for;  // MPI_COMM_WORLD ranks; for Finalizing filled in by the analysis
  std::string wait_reason;     // short, for the deadlock line: "MPI_Recv from rank 1"
  // Nonzero while in a collective: ranks with the same key are in the same
  // collective call on the same communicator and do not wait for each other.
  std::uint64_t collective_key = 0;
  // Blocked in a send, or on the request of a send, that the potential-deadlock
  // mode made synchronous.
  bool converted_send = false;
  std::vector<PendingMessage> messages;  // the call's point-to-point operations, for matching
  std::vector<Frame> stack;  // innermost first; checker, MPI and libc frames left out

  bool operator==(const RankSnapshot&) const = default;
};

// The monitor's reading of the wait-for graph.
struct DeadlockCore {
  std::vector<int> core;            // ranks of the cycle (AND) or knot (OR)
  std::vector<int> cycle;           // one cycle through the core, in wait order, first rank repeated at the end
  std::vector<int> blocked_behind;  // stuck only because they wait for the core
  bool empty() const { return core.empty(); }
  bool operator==(const DeadlockCore&) const = default;
};

// A compact, exact text form used to gather snapshots to rank 0 over MPI.
std::string serialize(const RankSnapshot& snapshot);
// Throws std::invalid_argument on malformed input.
RankSnapshot deserialize(std::string_view bytes);

const char* to_string(RankState state);
const char* to_string(WaitMode mode);

}  // namespace mpisentry
