// `mpisentry analyze DIR`: the communication logs of a run (COMM-LOG) read
// offline, for the deadlocks that another matching of its receives from
// MPI_ANY_SOURCE would give, without running the program again (in the
// spirit of EMPDD). The decisions are here, apart from the files
// (analyze_command.hpp), for the tests.
//
// How: the ranks' logged operations are run again in one process, as
// MPI may run them: each rank goes as far as it can, messages wait in
// their channels (one sender's in the order sent), a receive takes the
// first message of its sender that it matches unless an earlier receive of
// its rank matches it too, collectives wait for every member (MPI lets
// them). A receive from MPI_ANY_SOURCE is left open until nothing else can
// go on, so that every message that can be sent without it is there; it
// then takes one of the last messages that the rank's later receives will
// wait for, counted by sender and tag, by sender, or by tag from any sender
// (one of them then waits forever), else one that they wait for (bringing
// that nearer), else the first there. Every step is one MPI could take, so
// each deadlock found is one the program can reach, given that it makes
// the same calls whatever its receives took
// (its control flow does not follow the data; where it does, as after an
// MPI_Probe from MPI_ANY_SOURCE, the log has the calls of the recorded
// run). Not every deadlock is found: the general question is NP-complete,
// and one choice per receive is tried. The time grows about linearly with
// the log (bench/run --only analyze).
//
// Twice: with standard sends buffered (they complete before their receive,
// as MPI may run a small one), and with zero buffering (every standard send
// waits for its receive, as MPI may run a large one): a deadlock only there
// is a program that relies on buffering.
//
// A deadlock found rests on the program making the logged calls under the
// matching chosen; a program whose calls follow what it receives (a master
// that answers whichever worker it heard from) may not. So a deadlock is a
// finding only once a run of the program forced to that matching hangs
// (forcing() gives what to force; analyze_command.cpp runs it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "offline/explore.hpp"
#include "recording/comm_log.hpp"
#include "recording/recording.hpp"

namespace mpisentry::offline::analyze {

enum class Buffering { Standard, Zero };

// The message a receive from MPI_ANY_SOURCE took, and why that one.
enum class Reason {
  First,       // no message there was one a later receive needs: the first that came
  Needed,      // one that a later receive of its rank waits for
  Starves,     // one of the last from that sender that its later receives from it need: one waits forever
  StarvesTag,  // one of the last of that tag that its later receives of that tag need: one waits forever
};
struct Choice {
  int rank = 0;
  std::size_t op = 0;  // index in the rank's ops
  int sender = 0;      // MPI_COMM_WORLD rank
  int tag = 0;
  Reason reason = Reason::First;
};

// Where a rank stopped: in op, or where its log ends without "end" (the
// recorded run went no further there: op is ops.size()), and why, in words.
// after_cut: it waits for such a rank, directly or through others: for the
// end of the recorded run, not in a deadlock of its own.
struct Stopped {
  int rank = 0;
  std::size_t op = 0;
  bool log_ends = false;
  bool after_cut = false;
  std::string why;
};

struct Outcome {
  Buffering buffering = Buffering::Standard;
  std::vector<Choice> choices;   // every receive from MPI_ANY_SOURCE the run matched, in order
  std::vector<Stopped> stopped;    // every rank that did not reach "end", by rank
  // Some rank waits forever in an operation, not for a rank whose log ends.
  bool deadlock() const;
  // The choices of the ranks in the deadlock: the matching that makes it.
  std::vector<Choice> deadlock_choices() const;
};

// The logs of one run, by rank; throws std::invalid_argument for logs that
// do not belong together or that it cannot analyze (a call it does not
// model, a wait for a request it does not know, a rank out of range),
// naming the rank, the line and the problem.
void validate(const std::vector<recording::CommLog>& logs);

// One run of the logs; validate() first.
Outcome run(const std::vector<recording::CommLog>& logs, Buffering buffering);

// Whether `op` receives from MPI_ANY_SOURCE (a receive, a nonblocking one,
// or MPI_Sendrecv's receive).
bool receives_from_any_source(const recording::Op& op);

// What a run of the program must be forced to, to follow `outcome`'s
// matching, from `recordings` (by rank: the recording of the logged run,
// beside its logs). Each rank with a chosen receive has its recorded events
// up to its last chosen receive: each chosen receive forced to the sender
// chosen, the other receives from MPI_ANY_SOURCE among them left free, the
// rest (probes, Tests, Iprobes, Waitany) as recorded; then, as every other
// rank, it runs free. A chosen receive that cannot be forced (a persistent
// one's start; one past the end of a cut recording) runs free too. `changes`
// lists the forced ones. Throws std::invalid_argument, naming the file and
// the problem, when a recording does not go with its log.
explore::Schedule forcing(const std::vector<recording::CommLog>& logs,
                          const std::vector<recording::Recording>& recordings, const Outcome& outcome);

// An operation as the report names it: "MPI_Recv(source *, tag 1, comm 1)
// at matchings.c:43 (receive_any), rank-0.log line 5".
std::string op_text(const recording::CommLog& log, std::size_t op);

}  // namespace mpisentry::offline::analyze
