#include "monitor/monitor.hpp"

#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "config/settings.hpp"
#include "log/log.hpp"
#include "monitor/channel.hpp"
#include "monitor/describe.hpp"
#include "monitor/rules.hpp"
#include "monitor/termination.hpp"
#include "monitor/wait_graph.hpp"
#include "report/report.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;

constexpr auto kFinalizingTick = 2ms;  // a finalizing rank's monitor leaves soon after the last one arrives
constexpr auto kStackTimeout = 1000ms;
constexpr int kAbortExitCode = 1;
constexpr auto kStderrDrainLimit = 2s;
constexpr auto kStderrForwarding = 100ms;  // from the launcher's proxy on to mpiexec
constexpr auto kSignalDumpWait = termination::kMaxDumpTime - 300ms;  // the handler waits no longer

double to_seconds(std::chrono::microseconds d) { return std::chrono::duration<double>(d).count(); }

std::string executable_name() {
  char path[4096] = {};
  const ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  const std::string full = length > 0 ? std::string(path, static_cast<std::size_t>(length)) : "program";
  return full.substr(full.find_last_of('/') + 1);
}

// Named after the job so that concurrent jobs in one folder never share a file.
std::string default_report_path() {
  for (const char* variable : {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID", "JOB_ID"})
    if (const char* id = std::getenv(variable); id && *id)
      return "mpisentry_" + executable_name() + "_" + id + ".txt";
  char stamp[32] = {};
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", std::localtime(&now));
  return "mpisentry_" + executable_name() + "_" + stamp + "-" + std::to_string(getpid()) + ".txt";
}

std::string read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

// Says at start-up, not after a hang, that a report could not be written.
void check_writable(const std::string& path) {
  const std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.find_last_of('/') + 1);
  if (access(folder.c_str(), W_OK) != 0)
    log::error("report file \"{}\" cannot be written ({}: {}); reports will go to stderr only", path, folder,
               std::strerror(errno));
}

class Monitor {
 public:
  Monitor(const config::Settings& settings, pthread_t main_thread)
      : settings_(settings),
        describer_(channel_.rank()),
        decider_(Thresholds{settings.deadlock_timeout, settings.deadlock_warning,
                            settings.check_hard || settings.check_potential, settings.check_no_progress}),
        main_thread_(main_thread) {
    report_path_ = channel_.broadcast(settings.report_file.empty() ? default_report_path() : settings.report_file);
    if (channel_.rank() == 0) check_writable(report_path_);
    if (pipe(wake_pipe_) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
  }

  void start_thread() {
    thread_ = std::thread([this] { run(); });
  }

  void stop() {
    finalizing_.store(true, std::memory_order_release);
    wake();
    if (thread_.joinable()) thread_.join();
    channel_.close();
  }

  // On the dump thread: no MPI calls here. Returns once every rank's dump is
  // in the report, or at a deadline: the launcher kills the other ranks as
  // soon as one exits, so no rank leaves before the others have written.
  void write_signal_dump(int signal_number, const stacks::RawStack& stack) {
    const auto deadline = Clock::now() + kSignalDumpWait;
    RankSnapshot snapshot = describe(/*use_mpi=*/false);
    snapshot.stack = stacks::symbolize(stack);
    const std::string text = report::format_signal_dump(snapshot, signal_number);
    write_stderr(text);
    if (const std::string problem = report::write_file(report_path_, text, /*append=*/true); !problem.empty()) {
      log::error("{}", problem);
      return;
    }
    const auto all_dumped = [this] {
      return report::count_signal_dumps(read_file(report_path_)) >= static_cast<std::size_t>(size());
    };
    while (Clock::now() < deadline && !all_dumped()) std::this_thread::sleep_for(2ms);
  }

  int rank() const { return channel_.rank(); }
  int size() const { return channel_.size(); }
  const std::string& report_path() const { return report_path_; }

 private:
  void run() {
    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGTERM);
    sigaddset(&blocked, SIGINT);
    pthread_sigmask(SIG_BLOCK, &blocked, nullptr);

    const auto interval = std::chrono::duration_cast<Clock::duration>(settings_.check_interval);
    auto next_tick = Clock::now();
    int ticks_to_round = 1;
    while (true) {
      const bool finalizing = finalizing_.load(std::memory_order_acquire);
      const Clock::duration tick = finalizing ? Clock::duration(kFinalizingTick) : interval;
      // Aligned to the clock so that the ranks of a node start rounds together.
      next_tick = std::max(next_tick + tick, Clock::now());
      next_tick -= next_tick.time_since_epoch() % tick;
      sleep_until(next_tick);

      // Every tick times the rank's own calls; the ranks talk only when a
      // verdict may be due, or to agree on stopping.
      const LocalStatus status = observe();
      if (--ticks_to_round > 0 && !finalizing) continue;
      termination::keep_handlers_first();
      const Summary summary = channel_.allreduce(summarize(status, rank(), settings_.deadlock_timeout));
      switch (decider_.decide(summary)) {
        case Action::Stop: return;
        case Action::CheckDeadlock: check_deadlock(summary); break;
        case Action::WarnNoProgress: warn_no_progress(); break;
        case Action::None: break;
      }
      ticks_to_round = decider_.ticks_until_next_round(summary, settings_.check_interval);
      // Reading the debug info takes a fraction of a second: done ahead of a
      // report that may come, not when it is due.
      if (rank() == 0 && !symbolizer_warm_ && decider_.report_may_come(summary)) {
        symbolizer_.warm_up();
        symbolizer_warm_ = true;
      }
    }
  }

  void sleep_until(Clock::time_point when) {
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(when - Clock::now());
    if (wait.count() <= 0) return;
    pollfd woken{wake_pipe_[0], POLLIN, 0};
    if (poll(&woken, 1, static_cast<int>(wait.count())) > 0) {
      char drained[16];
      [[maybe_unused]] ssize_t ignored = read(wake_pipe_[0], drained, sizeof(drained));
    }
  }

  void wake() {
    const char byte = 1;
    [[maybe_unused]] ssize_t ignored = write(wake_pipe_[1], &byte, 1);
  }

  Activity::Sample sample() const {
    Activity::Sample sample;
    // A writer holds the record for nanoseconds: retrying is enough.
    while (!activity().sample(sample)) std::this_thread::yield();
    return sample;
  }

  LocalStatus observe() {
    const LocalStatus status = observer_.observe(sample(), Clock::now());
    std::lock_guard lock(status_mutex_);
    status_ = status;
    return status;
  }

  RankSnapshot describe(bool use_mpi) const {
    LocalStatus status;
    {
      std::lock_guard lock(status_mutex_);
      status = status_;
    }
    return describer_.describe(sample(), status, use_mpi);
  }

  // Where this rank's thread in MPI (or its main thread) is: located here,
  // symbolized once for all ranks by rank 0.
  std::vector<stacks::FrameAddress> locate_stack() const {
    const Activity::Sample now = sample();
    stacks::RawStack raw;
    if (now.in_call && !pthread_equal(now.call.thread, main_thread_)) return {};  // its kernel id is not recorded
    if (!stacks::capture_thread(main_tid_, raw, kStackTimeout)) return {};
    return stacks::locate(raw);
  }

  // Every rank's state, and where its stack is (symbolized only for a
  // report), at rank 0 in one gather; empty elsewhere.
  struct Gathered {
    std::vector<RankSnapshot> ranks;
    std::vector<std::string> frames;  // stacks::serialize'd, by rank
  };
  Gathered gather_ranks() {
    const std::string state = serialize(describe(/*use_mpi=*/true));
    const std::vector<std::string> parts =
        channel_.gather(std::to_string(state.size()) + ':' + state + stacks::serialize(locate_stack()));
    Gathered gathered;
    try {
      for (const std::string& part : parts) {
        const std::size_t colon = part.find(':');
        const std::size_t length = std::stoul(part.substr(0, colon));
        gathered.ranks.push_back(deserialize(std::string_view(part).substr(colon + 1, length)));
        gathered.frames.push_back(part.substr(colon + 1 + length));
      }
    } catch (const std::exception& error) {
      log::error("cannot read the ranks' states: {}", error.what());
      gathered = {};
    }
    return gathered;
  }

  // Rank 0 judges; when there is no deadlock the others need not hear of it,
  // and when there is one, rank 0 ends the job.
  void check_deadlock(const Summary& summary) {
    Gathered gathered = gather_ranks();
    const std::vector<RankSnapshot>& ranks = gathered.ranks;
    if (ranks.empty()) return;
    const bool everyone = decider_.all_blocked(summary);
    const DeadlockCore core = waitgraph::find_deadlock(ranks, to_seconds(settings_.deadlock_timeout));
    // Everyone blocked and no core: a deadlock only if some wait could not be
    // read; if every wait is a transfer or a collective under way, the run
    // is slow, not stuck.
    const bool unreadable_wait = std::any_of(ranks.begin(), ranks.end(), [](const RankSnapshot& rank) {
      return rank.state == RankState::Blocked && rank.wait_mode == WaitMode::None;
    });
    if (core.empty() && !(everyone && unreadable_wait)) return;
    const report::Check check = judge(ranks, core);
    publish(check, !everyone, core, std::move(gathered));
  }

  // POTENTIAL when the mode is on and a stuck rank waits in a converted send.
  report::Check judge(const std::vector<RankSnapshot>& ranks, const DeadlockCore& core) const {
    if (!settings_.check_potential) return report::Check::DeadlockHard;
    const auto converted = [&](int rank) { return ranks[static_cast<std::size_t>(rank)].converted_send; };
    bool found = false;
    if (core.empty()) {
      for (const RankSnapshot& rank : ranks) found = found || rank.converted_send;
    } else {
      for (int rank : core.core) found = found || converted(rank);
      for (int rank : core.blocked_behind) found = found || converted(rank);
    }
    return found ? report::Check::DeadlockPotential : report::Check::DeadlockHard;
  }

  void warn_no_progress() {
    Gathered gathered = gather_ranks();
    if (!gathered.ranks.empty())
      publish(report::Check::NoProgress, /*partial=*/false, DeadlockCore{}, std::move(gathered));
  }

  // Rank 0 only: writes the report; a fatal one ends the job.
  void publish(report::Check check, bool partial, const DeadlockCore& core, Gathered gathered) {
    const bool fatal = check != report::Check::NoProgress;
    report::Report report;
    report.check = check;
    report.partial = partial;
    report.core = core;
    report.threshold_seconds = to_seconds(fatal ? settings_.deadlock_timeout : settings_.deadlock_warning);
    report.threshold_key = fatal ? "DEADLOCK-TIMEOUT" : "DEADLOCK-WARNING";
    try {
      for (std::size_t rank = 0; rank < gathered.ranks.size(); ++rank)
        gathered.ranks[rank].stack = symbolizer_.symbolize(stacks::parse_frame_addresses(gathered.frames[rank]));
    } catch (const std::exception& error) {
      log::error("cannot read the ranks' stacks: {}", error.what());
    }
    report.ranks = std::move(gathered.ranks);
    write_report(report);
    if (fatal) {
      log::error("{}: aborting the job", report::check_name(check));
      wait_for_stderr_to_drain();
      PMPI_Abort(MPI_COMM_WORLD, kAbortExitCode);
    }
  }

  // Disk first, fsync'ed, then stderr: the job may be killed at any moment.
  void write_report(const report::Report& report) {
    const std::string text = report::format_text(report);
    const std::string problem = report::write_file(report_path_, text, /*append=*/reports_written_ > 0);
    ++reports_written_;
    const auto write_extra = [&](const std::string& path, const std::string& contents) {
      if (path.empty()) return;
      if (const std::string failed = report::write_file(path, contents, false); !failed.empty())
        log::error("{}", failed);
    };
    write_extra(settings_.report_json, report::format_json(report));
    write_extra(settings_.report_dot, report::format_dot(report));
    write_stderr(text);
    if (problem.empty())
      log::info("report written to {}", report_path_);
    else
      log::error("{}", problem);
  }

  // The launcher forwards stderr through a pipe and kills the job as soon as
  // MPI_Abort reaches it: let it read the report first.
  static void wait_for_stderr_to_drain() {
    const auto deadline = Clock::now() + kStderrDrainLimit;
    int unread = 0;
    while (ioctl(STDERR_FILENO, FIONREAD, &unread) == 0 && unread > 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    std::this_thread::sleep_for(kStderrForwarding);
  }

  static void write_stderr(const std::string& text) {
    std::size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = write(STDERR_FILENO, text.data() + written, text.size() - written);
      if (n <= 0 && errno != EINTR) return;
      if (n > 0) written += static_cast<std::size_t>(n);
    }
  }

  config::Settings settings_;
  Channel channel_;
  Describer describer_;
  Observer observer_;
  Decider decider_;
  pthread_t main_thread_;
  pid_t main_tid_ = gettid();  // constructed on the main thread
  std::string report_path_;
  int reports_written_ = 0;
  stacks::Symbolizer symbolizer_;  // rank 0's, for every rank's frames
  bool symbolizer_warm_ = false;
  std::thread thread_;
  std::atomic<bool> finalizing_{false};
  int wake_pipe_[2] = {-1, -1};
  mutable std::mutex status_mutex_;
  LocalStatus status_;
};

// Never destroyed: the process may exit without MPI_Finalize while the
// thread runs, and a joinable std::thread would then terminate it.
Monitor* running_monitor = nullptr;

std::string_view thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

}  // namespace

Started start(int granted_thread_level) {
  int rank = 0, size = 1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  PMPI_Comm_size(MPI_COMM_WORLD, &size);
  log::set_rank(rank);

  const config::LoadResult loaded = config::load([](const char* name) { return std::getenv(name); });
  log::set_verbosity(loaded.settings.verbose);
  if (!loaded.ok()) {
    if (rank == 0) {
      for (const config::Problem& problem : loaded.errors) log::error("{}", problem.str());
      log::error("bad configuration: stopping before the program starts");
    }
    PMPI_Finalize();
    std::exit(2);
  }
  if (rank == 0 && !std::getenv(config::kNoticesShownVariable))
    for (const config::Problem& notice : loaded.notices) log::warn("{}", notice.str());

  if (granted_thread_level < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      log::error("MPI gave {} instead of MPI_THREAD_MULTIPLE: mpisentry checks nothing in this run",
                 thread_level_name(granted_thread_level));
    return {};
  }

  const config::Settings& settings = loaded.settings;
  running_monitor = new Monitor(settings, pthread_self());
  stacks::install_capture_signal();
  termination::install([](int signal_number, const stacks::RawStack& stack) {
    running_monitor->write_signal_dump(signal_number, stack);
  });
  running_monitor->start_thread();
  if (rank == 0)
    log::info("checking {} ranks: DEADLOCK-TIMEOUT {}, DEADLOCK-WARNING {}{}; report file {}", size,
              config::format_duration(settings.deadlock_timeout), config::format_duration(settings.deadlock_warning),
              settings.check_potential ? ", standard sends made synchronous (GLOBAL:DEADLOCK:POTENTIAL)" : "",
              running_monitor->report_path());
  return {true, settings.check_potential, settings};
}

void stop() {
  if (running_monitor) running_monitor->stop();
}

}  // namespace mpisentry::monitor
