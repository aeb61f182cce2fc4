// The communication log of one rank (COMM-LOG): every point-to-point
// operation, collective and wait of the rank, in the order it made them,
// for `mpisentry analyze`. A text file, rank-R.log beside the rank's
// recording (rank-R.record, unless RECORD or REPLAY is set), written as the
// run goes:
//
//   mpisentry-log 2                     the format and its version
//   rank 0 of 4                         MPI_COMM_WORLD rank and size
//   command ./solver -n 10              the rank's command line
//   directory /home/u/run               the rank's working directory (not in version 1)
//   threads multiple                    (only then) the rank ran at MPI_THREAD_MULTIPLE
//   comm 7 0 2                          communicator 7's members, as MPI_COMM_WORLD ranks in its
//                                       rank order (before its first use; 1 is MPI_COMM_WORLD and
//                                       2 MPI_COMM_SELF, never listed); "comm 7 inter": an
//                                       inter-communicator
//   site 3 solver.c:41 exchange         call site 3: its place and function ("?" unknown)
//   send MPI_Send 1 2 0 3               a blocking send: function, communicator, destination, tag, site
//   recv MPI_Recv 1 * 0 3               a blocking receive (or MPI_Mprobe): source, tag ("*": any)
//   probe MPI_Probe 1 * * 3             a blocking probe
//   sendrecv MPI_Sendrecv 1 2 0 1 0 3   destination, send tag, source, receive tag
//   coll MPI_Allreduce 1 3              a blocking collective on communicator 1
//   isend 5 MPI_Isend 1 2 0 3           a nonblocking (or persistent, at its start) send, request 5
//   irecv 6 MPI_Irecv 1 * 0 3           ... receive
//   icoll 7 MPI_Iallreduce 1 3          ... collective
//   wait MPI_Waitall 3 5 6              a wait for every request listed (a Test that found them)
//   waitany MPI_Waitany 3 5 6           a wait for at least one of them
//   opaque MPI_Win_fence 3              a call that may wait and that analyze does not model
//   end                                 the rank reached MPI_Finalize
//
// Requests are the rank's own numbers, from 1 in the order started ("?": a
// request started before the log or by a call it does not model). Ranks are
// of the operation's communicator. A file without "end" is the log of a run
// that ended early (a hang, a crash, an abort).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "api/functions.hpp"

namespace mpisentry::recording {

inline constexpr int kLogVersion = 2;  // version 1 is read too: it has no directory line
inline constexpr std::uint64_t kWorldComm = 1, kSelfComm = 2;
inline constexpr int kAnyPeer = -1;       // MPI_ANY_SOURCE, written "*"
inline constexpr int kAnyTag = -1;        // MPI_ANY_TAG, written "*"
inline constexpr std::uint64_t kUnknownRequest = 0;  // written "?"

enum class OpKind : std::uint8_t {
  Send, Receive, Probe, SendReceive, Collective,
  StartSend, StartReceive, StartCollective,
  WaitAll, WaitAny,
  Opaque,
};

struct Op {
  OpKind kind = OpKind::Opaque;
  SendMode mode = SendMode::Standard;
  std::string function;  // "MPI_Send"
  std::uint64_t comm = 0;
  int peer = 0;  // destination of a send, source of a receive or probe (kAnyPeer)
  int tag = 0;   // (kAnyTag)
  int source = 0, receive_tag = 0;  // a SendReceive's receive
  std::uint64_t request = 0;        // a start's number
  std::vector<std::uint64_t> requests;  // a wait's (kUnknownRequest for "?")
  int site = 0;
  std::size_t line = 0;  // in the file, for messages
};

struct Communicator {
  std::vector<int> members;  // MPI_COMM_WORLD ranks in its rank order
  bool inter = false;
};

struct CommLog {
  int rank = 0;
  int ranks = 0;
  std::string command;
  std::string directory;  // empty in a log of version 1
  bool multiple_threads = false;
  std::map<std::uint64_t, Communicator> comms;  // as declared (not 1 or 2)
  std::map<int, std::string> sites;             // "solver.c:41 exchange"
  std::vector<Op> ops;
  bool finalized = false;  // "end"
};

// Parses one rank's log; throws std::invalid_argument naming the line and
// what is wrong with it. A last line without its newline is dropped.
CommLog parse_log(std::string_view text);

// The lines the runtime writes, each with its newline.
std::string log_header_text(int rank, int ranks, const std::string& command, const std::string& directory,
                            bool multiple_threads);
std::string comm_text(std::uint64_t id, const std::vector<int>& members, bool inter);
std::string site_text(int site, const std::string& place);
std::string op_text(const Op& op);  // of every kind (line is not written)
inline constexpr std::string_view kLogEnd = "end\n";

}  // namespace mpisentry::recording
