// The communication log (COMM-LOG): every point-to-point operation,
// collective and wait of a rank, in the order it made them, written to
// rank-R.log in the directory (recording/comm_log.hpp has the format) for
// `mpisentry analyze`, which looks for the matchings of receives from
// MPI_ANY_SOURCE that deadlock. Written as the run goes, like the
// recording: the monitor's tick, MPI_Abort, exit and a crash write what
// came since the last write, so that a run that hung leaves the log of what
// led there. With no directory set, the wrappers test one flag.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>

#include "records/call_record.hpp"

namespace mpisentry::comm_log {

namespace detail {
extern bool on;  // set in MPI_Init, cleared in MPI_Finalize
}
inline bool on() noexcept { return detail::on; }

// From MPI_Init: opens rank-R.log in `dir`; what is wrong when it cannot
// (the start-up handshake ends the job with it).
std::optional<std::string> start(const std::string& dir, int world_rank, int world_size, bool multiple_threads);

// A call that may wait (a blocking wrapper, at its start so that a hang in it
// is logged): `count` and `requests` are a Wait's requests.
void call(const CallRecord& record, int count, const MPI_Request* requests, const void* call_site);

// A nonblocking or persistent start succeeded (a persistent one is logged at
// each MPI_Start).
void started(MPI_Request request, const CallRecord& record, const void* call_site);
void restarted(int count, const MPI_Request* requests, const void* call_site);

// A Test-family call: logged as a wait when it found what it tests complete,
// with the requests it was given (copied before the call, which may free
// them). MPI_Improbe that found a message is logged as a call analyze does
// not model.
class Poll {
 public:
  Poll(const CallRecord& record, int count, const MPI_Request* requests, const void* call_site);
  void done(bool completed) const;

 private:
  bool on_;
  CallRecord record_;
  std::string line_;  // the wait's line, made before the call
};

// Where the recording is written (races::flush), the log is too: the
// monitor's tick also names the new call sites (slow the first time), a
// crash, an exit or an abort only writes. finish() from MPI_Finalize: "end".
void flush(bool symbolize);
void finish();

}  // namespace mpisentry::comm_log
