// Message races: a run's MPI calls whose outcome depends on timing (which
// sender a receive from MPI_ANY_SOURCE takes, which request a Waitany
// returns, whether an Iprobe or a Test finds something) are recorded with
// RECORD, and forced as recorded with REPLAY, so that a hang or a
// wrong result that one run in a hundred shows comes back every time.
//
// Each rank writes its own file (recording.hpp), rank-R.record in the
// directory, as the run goes: the monitor's tick writes what came since
// the last one, and so do MPI_Abort, exit and a crash, so that a run that
// hung or crashed leaves the recording of what led there. A receive from
// MPI_ANY_SOURCE is replayed by receiving from the recorded source (MPI
// keeps one sender's messages in order, so it is the same message); a
// Waitany, Waitsome or Test by waiting for the requests it completed,
// hiding the others; a call that found nothing, by answering so without
// calling MPI.
//
// Replay is exact for ranks whose timing-dependent calls come in one order
// (one thread makes them, or threads take turns the same way); a rank that
// calls otherwise than recorded stops the job with a message naming the
// call and the recorded event. Both at once replay one directory and record
// the run into another: the runs of --explore, whose schedules force the
// first outcomes and leave the rest free. With neither directory set, the
// wrappers test one flag.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "api/functions.hpp"
#include "recording/recording.hpp"

namespace mpisentry::races {

using recording::Event;
using recording::Kind;
using recording::kNothing;
using recording::kUndefined;
using recording::kUnknown;

namespace detail {
// Bits, set in MPI_Init, cleared in MPI_Finalize.
inline constexpr unsigned char kRecording = 1, kReplaying = 2;
extern unsigned char mode;
}  // namespace detail

inline bool on() noexcept { return detail::mode != 0; }
inline bool recording() noexcept { return (detail::mode & detail::kRecording) != 0; }
inline bool replaying() noexcept { return (detail::mode & detail::kReplaying) != 0; }

struct Setup {
  std::string record_dir;  // RECORD
  std::string replay_dir;  // REPLAY
  // EXPLORE: also record, for each receive or probe (MPI_Iprobe too) from
  // MPI_ANY_SOURCE, the other senders whose messages it could have taken.
  bool alternatives = false;
  int world_rank = 0;
  int world_size = 1;
  bool multiple_threads = false;  // the program runs at MPI_THREAD_MULTIPLE
};

// From MPI_Init, on every rank: opens its file. A recording that cannot be
// written or read, or that is not this job's (another rank count or
// command line), is a problem the start-up handshake ends the job with.
struct Problem {
  std::string file;
  std::string message;
};
std::optional<Problem> start(const Setup& setup);

// Writes what was recorded since the last call. From the monitor's tick
// (Patience::None: when a thread holds the recording, the next tick
// writes), and from MPI_Abort, exit and the crash dump (Patience::Brief:
// waits up to 50 ms for it; the crashed thread may hold it for good).
enum class Patience { None, Brief };
void flush(Patience patience);

// In MPI_Finalize: recording, writes the rest and "end", and prints where
// receives and probes from MPI_ANY_SOURCE were and which senders they took;
// replaying, stops the job when recorded events are left.
void finish();

// The next recorded event, for a call of `function` (an outcome of `kind`).
// Stops the job when the recording has another kind next, or no more
// events although the recorded run went on to MPI_Finalize. nullopt when the
// recorded run ended before (it hung or crashed there): the call runs as is.
std::optional<Event> replayed(Kind kind, FunctionId function);

// Stops the job: a call of `function` cannot have its recorded outcome
// (`problem` says why, e.g. the recorded index is past its array).
[[noreturn]] void diverged(FunctionId function, const std::string& problem);

// The rank's command line (NULs as spaces), as its recording keeps it.
std::string command_line();

// Records `event`.
void record(const Event& event);

// MPI_Iprobe or MPI_Improbe from `asked` returned (recording), having found
// a message (with `status`) or not. From MPI_ANY_SOURCE with alternatives
// on, it is opened as a receive is: a find's alternatives are the other
// senders whose matching message is there now and the first of each that a
// later receive takes; the first of a row that found nothing gets as
// alternatives the first message of each sender that a later receive takes
// (it finds one if that came sooner).
void polled(int asked, int tag, MPI_Comm comm, bool found, const MPI_Status& status);

// A receive or probe being recorded: from MPI_ANY_SOURCE, its event's number
// and what the summary says of it; from one source, a receive whose message
// may be another sender's alternative for an earlier one (alternatives on).
struct Watched {
  Kind kind = Kind::Receive;
  bool wildcard = true;
  std::uint64_t number = 0;
  const void* call_site = nullptr;
  int tag = MPI_ANY_TAG;
  MPI_Comm comm = MPI_COMM_NULL;
  std::uint64_t posted = 0;  // the rank's watched receives and probes counted in the order posted
};

// Whether receives from one source are watched now: recording alternatives,
// once a receive or probe from MPI_ANY_SOURCE was posted.
bool watching_all() noexcept;

// A receive or a blocking probe (kind Receive or Probe). From MPI_ANY_SOURCE,
// recording: numbered now, its source set when it completes (done() for a
// blocking call, the completing call for a nonblocking one); replaying:
// `source` becomes the recorded sender. Made before the call's record, so
// that the checker sees the source it runs with.
class SourceOutcome {
 public:
  SourceOutcome(Kind kind, FunctionId function, int& source, int tag, MPI_Comm comm, MPI_Status*& status,
                const void* call_site) {
    if (on() && (source == MPI_ANY_SOURCE || watching_all()))
      begin({kind, source == MPI_ANY_SOURCE, 0, call_site, tag, comm}, function, source, &status);
  }
  // A nonblocking start: no status.
  SourceOutcome(Kind kind, FunctionId function, int& source, int tag, MPI_Comm comm, const void* call_site) {
    if (on() && (source == MPI_ANY_SOURCE || watching_all()))
      begin({kind, source == MPI_ANY_SOURCE, 0, call_site, tag, comm}, function, source, nullptr);
  }
  SourceOutcome(const SourceOutcome&) = delete;
  SourceOutcome& operator=(const SourceOutcome&) = delete;
  // After a blocking call.
  void done(int result) const {
    if (numbered_) received(result);
  }
  // After a nonblocking start.
  void started(int result, MPI_Request request) const {
    if (numbered_ && result == MPI_SUCCESS) receive_started(request);
  }

 private:
  void begin(const Watched& watched, FunctionId function, int& source, MPI_Status** status);
  void received(int result) const;
  void receive_started(MPI_Request request) const;
  bool numbered_ = false;  // watched, while recording
  Watched watched_;
  MPI_Status* status_ = nullptr;
  MPI_Status own_;
};

// From a waiting thread's answer to the monitor (tested_wait.hpp): the
// receives its Wait or Test call holds that MPI has completed while the call
// waits on for others (an MPI_Waitall) are recorded now, so that a hang in
// that call leaves them recorded.
void note_completed_while_waiting();

// A persistent receive from MPI_ANY_SOURCE (MPI_Recv_init): its source
// cannot be forced at each start; says so once per rank.
void persistent_wildcard(int source);

// The watched nonblocking receives among a Wait or Test call's requests,
// taken out of the table before the call (MPI frees a completed request's
// handle, and another thread may get it), while recording.
class CompletingReceives {
 public:
  CompletingReceives(int count, const MPI_Request* requests) {
    if (recording() && pending()) hold(count, requests);
  }
  CompletingReceives(const CompletingReceives&) = delete;
  CompletingReceives& operator=(const CompletingReceives&) = delete;
  // Whether any is held: then the call needs real statuses.
  bool any() const { return !held_.empty(); }
  // requests[index] completed with `status` (once: a second time is ignored).
  void completed(int index, const MPI_Status& status);
  // The call returned: those not completed go back; all are dropped when it
  // failed (which completed is not known, and their handles may be reused).
  void finish(bool call_succeeded);

 private:
  friend void note_completed_while_waiting();
  static bool pending();
  void hold(int count, const MPI_Request* requests);
  void note_completed();
  struct Held {
    int index;
    MPI_Request request;
    Watched watched;
    bool completed;
  };
  std::vector<Held> held_;
};

}  // namespace mpisentry::races
