// `mpisentry dump PID`: asks a running job for one report of every rank's
// state, by sending the job's DUMP-SIGNAL the way that reaches its ranks.
// The decisions are here, apart from /proc (processes.hpp), for the tests.
#pragma once

#include "config/loading.hpp"
#include "config/settings.hpp"

#include <sys/types.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::launcher {

inline constexpr std::string_view kDumpCommand = "dump";

struct DumpArguments {
  bool help = false;
  pid_t pid = 0;
  std::vector<config::Problem> errors;
};

// `words` are those after "dump".
DumpArguments parse_dump_arguments(std::span<const std::string> words);

std::string dump_usage();

// A process's environment as /proc/PID/environ holds it: "A=B\0C=D\0".
using Environment = std::map<std::string, std::string, std::less<>>;
Environment parse_environ(std::string_view text);

// libmpisentry in LD_PRELOAD, or any MPISENTRY_ variable but those that the
// mpisentry command reads (MPISENTRY_LIBRARY, MPISENTRY_MPIEXEC).
bool started_by_mpisentry(const Environment& env);

// What a process does with a signal that reaches it.
enum class Disposition { kDefault, kCaught, kIgnored };

// What /proc tells of one process.
struct ProcessState {
  pid_t pid = 0;
  std::string name;           // of its executable: "mpiexec.hydra"
  bool maps_checker = false;  // libmpisentry.so
  bool has_rank = false;      // a rank number from the launcher in its environment
  Disposition disposition = Disposition::kDefault;  // of the dump signal
};

// Its disposition of `signal`, from the SigIgn and SigCgt masks of
// /proc/PID/status.
Disposition parse_disposition(std::string_view status, int signal);
// Whether /proc/PID/maps shows libmpisentry.so.
bool maps_checker(std::string_view maps);
// Whether the environment has the rank that a launcher gives each process it
// starts: PMI_RANK (hydra, srun --mpi=pmi2), PMIX_RANK (Open MPI, srun --mpi=pmix).
bool has_rank(const Environment& env);

// A rank of a checked job. The launchers and their proxies map the checker
// (and with it the MPI library) too, through the environment they pass on,
// but have no rank.
bool is_rank(const ProcessState& process);

// Whether a launcher by this executable name passes `signal` to every rank:
// hydra's mpiexec SIGUSR1 only (SIGUSR2 and real-time signals end it), srun
// and Open MPI's mpiexec SIGUSR1 and SIGUSR2.
bool forwards_to_ranks(std::string_view launcher_name, int signal);

struct DumpPlan {
  bool forward = false;        // send to the job's process, which passes it on
  std::vector<pid_t> targets;  // whom to send it to
  // Ranks on this host with the signal's default action: it would end them
  // (before MPI_Init, the checker has no handler yet). Nothing is sent then.
  std::vector<pid_t> unready;
};

// `job` is the process named on the command line; `descendants` its
// descendants on this host.
DumpPlan plan_dump(const ProcessState& job, std::span<const ProcessState> descendants, int signal);

// Where rank 0 writes the report, for the user: REPORT-FILE from the job's
// settings (relative to the job's working directory), else the default's pattern.
std::string report_location(const std::string& report_file, const std::string& job_directory);

// Why nothing was sent when some ranks are unready.
std::string unready_message(const DumpPlan& plan, int signal);

// The line saying what was sent to whom and where the report will be;
// `report` is where rank 0 writes it.
std::string sent_message(const ProcessState& job, const DumpPlan& plan, int signal, std::string_view report);

// The signal as kill -s and scancel --signal= take it: "USR1", "36".
std::string signal_word(int signal);

// `mpisentry dump ...`: `words` after "dump". Returns the exit status.
int run_dump_command(std::span<const std::string> words);

}  // namespace mpisentry::launcher
