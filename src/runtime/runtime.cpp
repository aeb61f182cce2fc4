// The runtime: MPI_Init, MPI_Init_thread, MPI_Query_thread, MPI_Finalize and
// MPI_Abort. It reads the settings once, checks with the start-up handshake
// that every rank runs the same checker with good settings, and starts the
// parts in order: the records, the monitor (which opens the report sink), the
// signal handlers, the monitor's thread, the interceptors' mode and delay
// injection, then the checks, all before the program's first wrapped call.
#include <dlfcn.h>
#include <link.h>
#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "checks/lifecycle.hpp"
#include "findings/findings.hpp"
#include "comm_log/comm_log.hpp"
#include "config/exit_status.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"
#include "config/slow_paths.hpp"
#include "config/suppressions.hpp"
#include "interceptors/delay_injection.hpp"
#include "interceptors/interceptors.hpp"
#include "log/log.hpp"
#include "mpi_libraries/loaded.hpp"
#include "mpi_libraries/mpi_libraries.hpp"
#include "monitor/handshake.hpp"
#include "monitor/in_process.hpp"
#include "monitor/monitor.hpp"
#include "races/races.hpp"
#include "records/call_record.hpp"
#include "records/call_text.hpp"
#include "records/communicators.hpp"
#include "records/lifecycle.hpp"
#include "records/message_tallies.hpp"
#include "records/thread_state.hpp"
#include "report/suppressions.hpp"
#include "signals/signals.hpp"

#define MPISENTRY_API extern "C" __attribute__((visibility("default")))

namespace mpisentry {
namespace {

// A library of the other MPI family than this build's, when the process has
// loaded one: this library preloaded by hand into a program of the other MPI
// loads both MPIs into one process.
std::string other_mpi_loaded() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* found) {
        if (object->dlpi_name == nullptr) return 0;
        const auto family = mpi_libraries::family_of(object->dlpi_name);
        if (!family || *family == mpi_libraries::kBuiltFor) return 0;
        *static_cast<std::string*>(found) = object->dlpi_name;
        return 1;
      },
      &found);
  return found;
}

// Every handle this library gave MPI would be the other MPI's: the process
// ends before the program runs, with the status the mpisentry command gives
// when it cannot start a job.
void refuse_another_mpi() {
  const std::string other = other_mpi_loaded();
  if (other.empty()) return;
  const std::string_view built_for = mpi_libraries::name(mpi_libraries::kBuiltFor);
  const std::string_view program_mpi = mpi_libraries::name(*mpi_libraries::family_of(other));
  log::error("this libmpisentry.so is built for {}, but the program loads {} ({}): start the job with the mpisentry "
             "command, which preloads the library for the program's MPI, or preload the library built for {}",
             built_for, program_mpi, other, program_mpi);
  log::wait_for_stderr_to_drain();
  _exit(config::kCannotRunStatus);
}

// Before the other constructors (the Fortran bindings' redirection).
__attribute__((constructor(101))) void refuse_another_mpi_at_load() { refuse_another_mpi(); }

// The recording and the communication log, written now: a crash, an exit
// or MPI_Abort may end the process next.
void write_recordings_now() {
  races::flush(races::Patience::Brief);
  comm_log::flush(/*symbolize=*/false);
}

// Set once in MPI_Init; constant after.
int program_thread_level = MPI_THREAD_SINGLE;
bool checking = false;  // between MPI_Init and MPI_Finalize
int error_exitcode = 0;  // ERROR-EXITCODE

// What the process passed to exit(), once exit() began: only then may
// at_process_exit() judge.
std::optional<int> exit_status;

// A rank may still call MPI_Finalize while it exits: in an atexit handler it
// registered before MPI_Init or in a global object's destructor, both of
// which run after an on_exit handler of MPI_Init's. glibc runs the shared
// objects' destructors after every exit handler registered since the program
// started, and ours before libmpi's (we depend on it): the verdict on the
// exit waits for them.
//
// Then ERROR-EXITCODE, once MPI_Finalize found that some rank's findings
// count: the status this rank ends with instead of its own (0: its own),
// after the program's exit handlers and its objects' destructors, as
// LeakSanitizer's exitcode does. Only libc's stdio flush, done here, and
// libmpi's destructors, after PMPI_Finalize, are left out.
int status_after_findings = 0;

__attribute__((destructor)) void at_process_exit() {
  if (!exit_status) return;
  monitor::exit_without_finalize(*exit_status);
  if (status_after_findings == 0) return;
  std::fflush(nullptr);
  log::wait_for_stderr_to_drain();
  _exit(status_after_findings);
}

// More ranks on this node than cores its ranks may run on, all together
// (each may be bound to one).
bool more_ranks_than_cores() {
  MPI_Comm node = MPI_COMM_NULL;
  if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return false;
  int ranks_on_node = 1;
  PMPI_Comm_size(node, &ranks_on_node);
  cpu_set_t mine, node_cores;
  CPU_ZERO(&mine);
  CPU_ZERO(&node_cores);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) CPU_SET(0, &mine);
  PMPI_Allreduce(&mine, &node_cores, sizeof(cpu_set_t), MPI_BYTE, MPI_BOR, node);
  PMPI_Comm_free(&node);
  return ranks_on_node > CPU_COUNT(&node_cores);
}

// The settings, read once: defaults, the config file, the environment. A
// bad configuration ends the run in the start-up handshake, before the
// program's own code.
config::LoadResult read_settings(int world_rank) {
  config::LoadResult loaded = config::load([](const char* name) { return std::getenv(name); });
  config::name_unknown_variables(config::environment_names(), loaded);
  if (loaded.ok() && !loaded.settings.suppressions_file.empty())
    report::set_suppressions(config::read_suppressions(loaded.settings.suppressions_file, loaded.errors));
  log::set_verbosity(loaded.settings.verbose);
  if (loaded.ok() && world_rank == 0 && !std::getenv(config::kNoticesShownVariable))
    for (const config::Problem& notice : loaded.notices) log::warn("{}", notice.str());
  return loaded;
}

// Never destroyed: the parts keep references to the settings until the
// process ends.
const config::Settings& keep(const config::Settings& settings) { return *new const config::Settings(settings); }

// Which checker this rank runs, for the start-up handshake: the build's
// version and the file of this library, as the dynamic loader found it.
monitor::handshake::Identity own_identity() {
  Dl_info info{};
  const bool found = dladdr(reinterpret_cast<void*>(&own_identity), &info) != 0 && info.dli_fname != nullptr;
  return {MPISENTRY_VERSION, found ? info.dli_fname : "(file unknown)"};
}

// Every rank joins within the bound, runs rank 0's version and has loaded its
// settings, or every rank ends here, once told why, with the handshake's
// status: by an exit after PMPI_Finalize when every rank knows; by an abort of
// the job once the message is out when some rank may not even be checked.
// Returns the monitors' communicator.
MPI_Comm shake_hands(int world_rank, const config::LoadResult& loaded) {
  namespace handshake = monitor::handshake;
  // Bad settings may hold any timeout: the default bounds their handshake.
  const config::Duration bound =
      config::any_verdict_after(loaded.ok() ? loaded.settings.deadlock_timeout : config::Settings{}.deadlock_timeout);
  const handshake::Result result = handshake::run({world_rank, handshake::host_name()}, own_identity(), loaded.errors, bound);
  switch (result.outcome) {
    case handshake::Outcome::Agreed:
      break;
    case handshake::Outcome::Refused:
      PMPI_Finalize();
      std::exit(handshake::kStoppedStatus);
    case handshake::Outcome::Unanswered:
      lifecycle::abort_job(handshake::kStoppedStatus);
  }
  return result.comm;
}

// MPI runs at the level the program asked for, and the program is told
// what MPI gave. MPI_THREAD_SINGLE becomes MPI_THREAD_FUNNELED, as the
// checker's threads run beside the program's (they never call MPI while it
// runs); MPICH treats the two alike.
int initialize(int* argc, char*** argv, int required, int* provided) {
  refuse_another_mpi();  // also one loaded since, as Python's mpi4py loads its MPI
  this_thread_state();  // the thread that initializes MPI is thread 0
  int granted = MPI_THREAD_SINGLE;
  mpi_libraries::note_before_init();
  monitor::in_process::note_before_init();
  const int result = PMPI_Init_thread(argc, argv, std::max(required, static_cast<int>(MPI_THREAD_FUNNELED)), &granted);
  mpi_libraries::note_after_init();  // UCX's transports, Open MPI's components: loaded by PMPI_Init
  if (result != MPI_SUCCESS) return result;
  int world_rank = 0, world_size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
  log::set_rank(world_rank);
  comms::initialize(world_rank, world_size);
  program_thread_level = std::min(required, granted);
  const bool multiple_threads = program_thread_level == MPI_THREAD_MULTIPLE;
  requests().set_concurrent_writers(multiple_threads);
  tallies::set_concurrent_writers(multiple_threads);
  if (provided) *provided = program_thread_level;

  config::LoadResult loaded = read_settings(world_rank);
  // A recording that cannot be written or replayed ends the run in the
  // handshake too: the program has run none of its MPI calls yet.
  // A communication log comes with the run's recording, beside it, unless
  // the run records or replays elsewhere: mpisentry analyze forces its
  // matchings from it.
  const config::Settings& asked = loaded.settings;
  const std::string& record_dir =
      asked.record_dir.empty() && asked.replay_dir.empty() ? asked.comm_log_dir : asked.record_dir;
  if (loaded.ok())
    if (const auto problem = races::start(
            {record_dir, asked.replay_dir, asked.explore_runs > 0, world_rank, world_size, multiple_threads}))
      loaded.errors.push_back({problem->file, problem->message});
  if (loaded.ok() && !loaded.settings.comm_log_dir.empty())
    if (const auto problem =
            comm_log::start(loaded.settings.comm_log_dir, world_rank, world_size, multiple_threads))
      loaded.errors.push_back({loaded.settings.comm_log_dir, *problem});
  MPI_Comm monitor_comm = shake_hands(world_rank, loaded);
  const config::Settings& settings = keep(loaded.settings);
  error_exitcode = settings.error_exitcode;

  const monitor::ReportPaths& report_paths = monitor::create(settings, program_thread_level, monitor_comm);
  // The dump signal first, so that an automatic stack signal keeps clear of it.
  // A crash leaves the recording of what led to it.
  signals::install({world_rank,
                    [](const signals::Ending& ending, const stacks::RawStack& stack) {
                      write_recordings_now();
                      monitor::write_signal_dump(ending, stack);
                    },
                    settings.check_exit_signal, settings.dump_signal, monitor::wake_fd()});
  signals::install_stack_signal(settings.stack_signal);
  lifecycle::watch_forks();
  on_exit(
      [](int status, void*) {
        exit_status = status;
        write_recordings_now();
      },
      nullptr);
  monitor::start_thread();
  checking = true;
  if (world_rank == 0 && monitor::checks_deadlocks())
    log::info("checking {} ranks: DEADLOCK-TIMEOUT {}, DEADLOCK-WARNING {}{}; report file {} (relative paths are "
              "taken in {})",
              world_size, config::format_timeout(settings.deadlock_timeout),
              config::format_duration(settings.deadlock_warning),
              settings.check_potential ? ", standard sends made synchronous (GLOBAL:DEADLOCK:POTENTIAL)" : "",
              report_paths.text, report_paths.base);

  const config::AutoSwitch patient = settings.patient_waits;
  interceptors::start({settings.check_potential, patient == config::AutoSwitch::On ||
                                                     (patient == config::AutoSwitch::Auto && more_ranks_than_cores())});
  delay_injection::configure(settings.inject_delays, world_rank);
  checks::start(settings, world_rank, program_thread_level);
  if (world_rank == 0) log::debug("the wrappers' slow paths: {}", slow_paths::taken());
  monitor::in_process::note_checker_started();
  return result;
}

}  // namespace
}  // namespace mpisentry

using namespace mpisentry;

MPISENTRY_API int MPI_Init(int* argc, char*** argv) { return initialize(argc, argv, MPI_THREAD_SINGLE, nullptr); }

MPISENTRY_API int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return initialize(argc, argv, required, provided);
}

#if MPI_VERSION >= 4  // sessions are MPI 4.0's (Open MPI 4.1 has none)
// A program of sessions alone (no MPI_Init) has no MPI_COMM_WORLD for the
// checker to start on: it runs unchecked, and says so once per process.
MPISENTRY_API int MPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  const int result = PMPI_Session_init(info, errhandler, session);
  int initialized = 0;
  static std::atomic<bool> said{false};
  if (result == MPI_SUCCESS && PMPI_Initialized(&initialized) == MPI_SUCCESS && !initialized && !said.exchange(true))
    log::warn("this process started MPI with MPI_Session_init and has not called MPI_Init or MPI_Init_thread: "
              "mpisentry checks a program from its MPI_Init, and does not check this one");
  return result;
}
#endif

MPISENTRY_API int MPI_Query_thread(int* provided) {
  const int result = PMPI_Query_thread(provided);
  if (result == MPI_SUCCESS && checking) *provided = program_thread_level;
  return result;
}

MPISENTRY_API int MPI_Abort(MPI_Comm comm, int errorcode) {
  lifecycle::note_abort();
  write_recordings_now();
  return PMPI_Abort(comm, errorcode);
}

MPISENTRY_API int MPI_Finalize(void) {
  CallRecord record;
  record.shape = CallShape::Finalize;
  ThreadState& self = enter_call(record, FunctionId::Finalize);
  // "end" now: a rank that waits here for the others has reached MPI_Finalize.
  comm_log::finish();
  // Blocks until every rank is here: the monitors stop after the same round.
  monitor::stop();
  checking = false;
  const bool findings_count = checks::finish();
  // Messages compared only now (their records came with the last batches)
  // may have reached CHECK-MAX-ERRORS: the job ends before MPI does.
  checks::stop_at_error_limit();
  races::finish();
  const int result = PMPI_Finalize();
  if (findings_count) status_after_findings = error_exitcode;
  self.leave(true);
  return result;
}
