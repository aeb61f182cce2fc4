#include "monitor/monitor.hpp"

#include <mpi.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "log/log.hpp"
#include "monitor/channel.hpp"
#include "monitor/describe.hpp"
#include "monitor/ending.hpp"
#include "monitor/handshake.hpp"
#include "monitor/in_process.hpp"
#include "monitor/report_paths.hpp"
#include "monitor/reports.hpp"
#include "monitor/rounds.hpp"
#include "signals/signals.hpp"
#include "monitor/verdict.hpp"
#include "monitor/wait_graph.hpp"
#include "records/call_text.hpp"
#include "records/lifecycle.hpp"
#include "records/tick.hpp"
#include "comm_log/comm_log.hpp"
#include "races/races.hpp"
#include "report/html.hpp"
#include "report/suppressions.hpp"
#include "report/report.hpp"
#include "report/sink.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;

constexpr auto kFinalizingTick = 2ms;  // a finalizing rank's monitor leaves soon after the last one arrives
constexpr auto kStackTimeout = 1000ms;
constexpr auto kSignalDumpWait = signals::kMaxDumpTime - 300ms;  // the handler waits no longer
// Requests that reach a rank this soon after a dump began are the same
// request reaching the ranks one by one (mpiexec, scancel and kill signal
// them in turn), or reaching a rank whose monitor had no CPU to take it.
constexpr auto kDumpMergeTime = 1s;


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

// "." when the working directory is gone: paths then stay relative to it.
std::string working_directory() {
  std::error_code error;
  const std::filesystem::path directory = std::filesystem::current_path(error);
  return error ? std::string(".") : directory.string();
}

// Names the job's handshake folder when the report file is not a regular
// file (report::Sink): chosen by rank 0, unique on its node.
std::string job_name() {
  return fmt::format("{}-{}-{}", executable_name(), getpid(), static_cast<long long>(std::time(nullptr)));
}

// Only a regular file: REPORT-FILE may name /dev/stderr or a pipe.
void remove_stale_report(const std::string& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) == 0 && S_ISREG(status.st_mode)) unlink(path.c_str());
}

// Says at start-up, not after a hang, that a report could not be written.
void check_writable(const std::string& path) {
  const std::string folder = path.find('/') == std::string::npos ? "." : path.substr(0, path.find_last_of('/') + 1);
  if (access(folder.c_str(), W_OK) != 0)
    log::error("report file \"{}\" cannot be written ({}: {}); reports will go to stderr only", path, folder,
               std::strerror(errno));
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  PMPI_Comm_rank(comm, &rank);
  return rank;
}

// Collective over `comm`, on the program's thread.
std::string broadcast_over(MPI_Comm comm, const std::string& value_at_root) {
  std::string value = value_at_root;
  int length = static_cast<int>(value.size());
  PMPI_Bcast(&length, 1, MPI_INT, 0, comm);
  value.resize(static_cast<std::size_t>(length));
  PMPI_Bcast(value.data(), length, MPI_CHAR, 0, comm);
  return value;
}

class Monitor;
// Never destroyed: the process may exit without MPI_Finalize while the
// thread runs, and a joinable std::thread would then terminate it.
Monitor* running_monitor = nullptr;

class Monitor {
 public:
  // On the program's thread in MPI_Init: `comm` carries the agreement on
  // the report files and the monitors' endpoints, then is freed.
  Monitor(const config::Settings& settings, int program_thread_level, MPI_Comm comm)
      : settings_(settings),
        program_thread_level_(program_thread_level),
        rank_(rank_in(comm)),
        describer_(rank_),
        decider_(thresholds()) {
    const std::string job = rank_ == 0 ? job_name() : std::string();
    // Rank 0 chooses, and every rank writes to the same absolute paths
    // whatever its own working directory.
    if (rank_ == 0) {
      ReportPaths asked;
      asked.text = settings.report_file.empty() ? default_report_path() : settings.report_file;
      asked.json = settings.report_json;
      asked.dot = settings.report_dot;
      asked.html = settings.report_html;
      asked.junit = settings.report_junit;
      asked.sarif = settings.report_sarif;
      report_paths_ = resolve_report_paths(asked, std::getenv(config::kLaunchDirectoryVariable), working_directory());
      // Every report of the job, from any rank, is appended to the file: one
      // left by an earlier run goes first, with its dump handshake, before
      // any rank can leave MPI_Init.
      remove_stale_report(report_paths_.text);
      report::remove_handshake_folder(report::handshake_folder(report_paths_.text, job));
      report::start_ci_reports(report_paths_.junit, report_paths_.sarif);
    }
    report_paths_.text = broadcast_over(comm, report_paths_.text);
    report_paths_.json = broadcast_over(comm, report_paths_.json);
    report_paths_.dot = broadcast_over(comm, report_paths_.dot);
    report_paths_.html = broadcast_over(comm, report_paths_.html);
    report_paths_.junit = broadcast_over(comm, report_paths_.junit);
    report_paths_.sarif = broadcast_over(comm, report_paths_.sarif);
    report::SinkSetup sink;
    sink.report_file = report_paths_.text;
    sink.json = report_paths_.json;
    sink.dot = report_paths_.dot;
    sink.html = report_paths_.html;
    sink.junit = report_paths_.junit;
    sink.sarif = report_paths_.sarif;
    sink.rank = rank_;
    PMPI_Comm_size(comm, &sink.ranks);
    sink.job = broadcast_over(comm, job);
    report::start_sink(std::move(sink));
    if (rank_ == 0) check_writable(report_paths_.text);
    if (pipe(wake_pipe_) != 0) wake_pipe_[0] = wake_pipe_[1] = -1;
    channel_ = Channel::open(comm, settings);
    if (channel_) lifecycle::set_abort_hook([] { tell_ending(0); });
    else if (rank_ == 0)
      log::error("the monitor threads cannot reach each other (said above): this run has no deadlock checks "
                 "(GLOBAL:DEADLOCK:HARD, POTENTIAL, NO_PROGRESS, OUTSIDE_MPI), no dump on DUMP-SIGNAL and no "
                 "report of a rank that exits without MPI_Finalize; the other checks go on. MONITOR-PORTS and "
                 "MONITOR-INTERFACES choose the ports and networks the monitors use");
    PMPI_Comm_free(&comm);
  }

  bool checks_deadlocks() const { return channel_ != nullptr; }

  void start_thread() {
    if (!channel_) return;
    channel_->start_pulses();
    thread_ = std::thread([this] { run(); });
  }

  // The channel is closed, never freed: the dump thread may still tell it.
  void stop() {
    finalizing_.store(true, std::memory_order_release);
    wake();
    if (thread_.joinable()) thread_.join();
    if (channel_) channel_->close();
  }

  // This rank ends (a signal's dump, MPI_Abort): its neighbours learn it
  // before its links close, and do not take it for lost.
  static void tell_ending(int signal_number) {
    // A forked child holds copies of the rank's links: it is no rank.
    if (!running_monitor || !running_monitor->channel_ || lifecycle::in_forked_child()) return;
    try {
      running_monitor->channel_->tell_ending(signal_number);
    } catch (const std::exception&) {
      // Telling is a courtesy: the rank ends all the same.
    }
  }

  // On the dump thread: no MPI calls here. A crash is this rank's alone. For
  // SIGTERM and SIGINT, returns once every rank's dump is in the report, or at
  // a deadline: the launcher kills the other ranks as soon as one exits, so
  // no rank leaves before the others have written.
  void write_signal_dump(const signals::Ending& ending, const stacks::RawStack& stack) {
    // Read before telling: the monitor ends checking on the news it sends.
    const bool broke_before = channel_broke_.load(std::memory_order_acquire);
    tell_ending(ending.signal_number);
    // Another rank ended first (MPI_Abort, an exit, a crash) and the launcher
    // ends the others with SIGTERM, as Open MPI's mpiexec does where Hydra
    // sends SIGKILL: this rank's stack is no finding of its own.
    if (!ending.fatal && broke_before) {
      log::debug("{} after checking for deadlocks ended ({}): the launcher ends the job, no report",
                report::signal_name(ending.signal_number), channel_broken_);
      return;
    }
    const auto deadline = Clock::now() + kSignalDumpWait;
    RankSnapshot snapshot = describe(/*ask_threads=*/false);
    // The stack is the signalled thread's: its own when it called MPI.
    ThreadSnapshot* signalled = snapshot.threads.empty() ? nullptr : &snapshot.threads.front();
    const Threads threads = sample_threads();
    for (const ThreadState::Sample& sample : threads.samples)
      if (sample.tid == ending.tid)
        for (ThreadSnapshot& thread : snapshot.threads)
          if (thread.id == sample.id) signalled = &thread;
    if (signalled) signalled->stack = stacks::symbolize(stack);
    // The last tick may have seen the rank call MPI lately and called it
    // polling; the signal says where it is now: outside MPI, it computes.
    const bool inside_mpi = std::any_of(threads.samples.begin(), threads.samples.end(),
                                        [](const ThreadState::Sample& sample) { return sample.in_call; });
    if (!inside_mpi && snapshot.state == RankState::Polling) {
      snapshot.state = RankState::Running;
      for (ThreadSnapshot& thread : snapshot.threads) thread.state = RankState::Running;
    }
    const std::string fault = ending.has_fault_address ? fmt::format("{:#x}", ending.fault_address) : "";
    const std::string text = report::format_signal_dump(snapshot, ending.signal_number, fault);
    const std::string json = settings_.report_json.empty()
                                 ? std::string()
                                 : report::format_json(reports::signal_dump_report(snapshot, ending.signal_number));
    // A crash is this rank's alone; SIGTERM and SIGINT reach every rank,
    // which wait for each other's dumps (report::Sink's handshake).
    report::Sink& sink = *report::sink();
    const report::CiRecord ci =
        sink.wants_ci() ? report::ci_record(reports::signal_dump_report(snapshot, ending.signal_number), text)
                        : report::CiRecord{};
    sink.write_rank_dump(text, json, /*will_wait=*/!ending.fatal, sink.wants_ci() ? &ci : nullptr);
    if (!ending.fatal) sink.wait_for_dumps(deadline);
  }

  // From the program's thread in exit() (an on_exit handler), when MPI_Init
  // ran and MPI_Finalize did not: the rank's exit is reported to every rank,
  // then checking ends (the ranks' monitors can no longer meet). Returns once
  // the report is written, or after ExitNotice::kReportLimit.
  void exit_without_finalize(int status) {
    if (!thread_.joinable() || std::this_thread::get_id() == thread_.get_id() ||
        finalizing_.load(std::memory_order_acquire) ||
        lifecycle::aborting() || lifecycle::in_forked_child() || exit_.checking_ended())
      return;
    exit_.announce(status);
    wake();
    exit_.wait_for_report();
  }

  int rank() const { return rank_; }
  int wake_fd() const { return wake_pipe_[1]; }
  const ReportPaths& report_paths() const { return report_paths_; }

 private:
  // A monitor whose connection to another breaks (its rank ended, or the
  // network failed) stops checking: the others learn it as its connections close.
  void run() {
    signals::block_in_checker_thread();
    try {
      run_rounds();
    } catch (const RankLost& lost) {
      end_for_lost(lost.lost());
    } catch (const ChannelBroken& broken) {
      end_checking(broken.what(), /*broken=*/true);
    }
  }

  void end_checking(const std::string& why, bool broken) {
    if (broken) {
      channel_broken_ = why;
      channel_broke_.store(true, std::memory_order_release);
    }
    if (rank() == 0)
      log::info("checking for deadlocks ends: {}", why);
    else
      log::debug("checking for deadlocks ends: {}", why);
    exit_.end_checking();
    channel_->close();
  }

  // A rank was lost, and every rank still connected learns it (Channel).
  // One that said it ends (a signal's dump, MPI_Abort) has its own report;
  // one that vanished or fell silent is reported by each rank that outlived
  // it: first at once, its calls and waits without stacks, as a launcher
  // that kills the job may leave only milliseconds; then with the stacks.
  // Then checking ends on every rank: no verdict rests on a rank that is
  // gone or may yet go on.
  void end_for_lost(const LostRank& lost) {
    if (lost.how == LostRank::How::Ending) {
      // SIGTERM and SIGINT reach every rank, which dumps its own state.
      const bool every_rank_dumps = lost.signal_number == SIGTERM || lost.signal_number == SIGINT;
      end_checking(fmt::format("rank {} ends ({})", lost.rank,
                               lost.signal_number == 0 ? std::string("MPI_Abort")
                                                       : report::signal_name(lost.signal_number)),
                   /*broken=*/!every_rank_dumps);
      return;
    }
    if (lost.rank == rank()) {
      log::warn("this rank's monitor said nothing to the others for DEADLOCK-WARNING (the process was stopped?): "
                "they reported it lost (GLOBAL:RANK:LOST), and checking for deadlocks has ended");
      end_checking("this rank was lost to the others", /*broken=*/true);
      return;
    }
    const std::string why = fmt::format("rank {} was lost", lost.rank);
    if (!settings_.check_rank_lost) {
      end_checking(why, /*broken=*/true);
      return;
    }
    const std::vector<std::string> lines =
        reports::lost_rank_lines(lost, process_state(lost), to_seconds(settings_.deadlock_warning));
    // Nothing waited for: a waiting thread asked about its requests may get
    // no CPU in the milliseconds Hydra leaves.
    write_rank_lost(describe(/*ask_threads=*/false), lines, /*with_stacks=*/false);
    end_checking(why, /*broken=*/true);
    // The fuller report: requests confirmed, the stacks symbolized here.
    RankSnapshot mine = describe(/*ask_threads=*/true);
    Gathered own;
    own.frames.push_back(locate_stacks(mine));
    own.ranks.push_back(std::move(mine));
    symbolize_into(own);
    write_rank_lost(own.ranks.front(), lines, /*with_stacks=*/true);
  }

  // The CI reports get the first, fast report alone: it is the one sure to
  // be on disk before the launcher ends the job.
  void write_rank_lost(const RankSnapshot& mine, const std::vector<std::string>& lines, bool with_stacks) {
    report::Sink& sink = *report::sink();
    const std::string text = report::format_rank_lost(mine, lines, with_stacks);
    const std::string json = settings_.report_json.empty()
                                 ? std::string()
                                 : report::format_json(reports::rank_lost_report(mine, lines));
    const bool wants_ci = !with_stacks && sink.wants_ci();
    const report::CiRecord ci =
        wants_ci ? report::ci_record(reports::rank_lost_report(mine, lines), text) : report::CiRecord{};
    sink.write_rank_report(text, json, wants_ci ? &ci : nullptr);
  }

  // What this host's /proc says of the lost rank's process, when it ran here.
  std::string process_state(const LostRank& lost) const {
    if (lost.host != handshake::host_name() || lost.pid <= 0) return {};
    const std::optional<std::string> stat = read_stat(lost.pid);
    if (!stat) return fmt::format("no process {}", lost.pid);
    // "pid (comm) S ...": the state follows the last ')'.
    const std::size_t close = stat->rfind(')');
    if (close == std::string::npos || close + 2 >= stat->size()) return {};
    const char state = (*stat)[close + 2];
    if (state == 'Z') return "ended, not yet reaped, " + zombie_ending(stat->substr(close + 2));
    // Its sockets close while the kernel tears the process down.
    if (lost.how == LostRank::How::Ended) return "still ending";
    switch (state) {
      case 'T': return "stopped (SIGSTOP or a debugger)";
      case 't': return "stopped by a debugger";
      case 'D': return "in uninterruptible sleep in the kernel";
      case 'R': return "running";
      case 'S': return "asleep";
      default: return {};
    }
  }

  // How a process that is a zombie ended: the exit code, field 52 of its
  // stat (the fields after its name start at field 3).
  static std::string zombie_ending(const std::string& fields) {
    std::size_t at = 0;
    for (int field = 3; field < 52 && at != std::string::npos; ++field) at = fields.find(' ', at + 1);
    if (at == std::string::npos) return "how is not known";
    const int code = std::atoi(fields.c_str() + at + 1);
    if (code & 0x7f) return "killed by " + report::signal_name(code & 0x7f);
    return fmt::format("exited with status {}", (code >> 8) & 0xff);
  }

  static std::optional<std::string> read_stat(int pid) {
    const std::string path = fmt::format("/proc/{}/stat", pid);
    FILE* file = std::fopen(path.c_str(), "re");
    if (!file) return std::nullopt;
    char text[1024] = {};
    const std::size_t got = std::fread(text, 1, sizeof(text) - 1, file);
    std::fclose(file);
    return std::string(text, got);
  }

  void run_rounds() {
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
      tick::advance();
      races::flush(races::Patience::None);  // before a verdict may end the job
      comm_log::flush(/*symbolize=*/true);

      // Every tick times the rank's own calls; the ranks talk only when a
      // verdict may be due, to agree on stopping, or when this rank has news
      // (a dump request, its exit) that its round carries to the others.
      LocalStatus status = observe();
      if (const auto requested_at = signals::take_dump_request()) {
        if (*requested_at < last_dump_began_ + kDumpMergeTime)
          log::info("{} arrived with the dump just made: merged into it", report::signal_name(settings_.dump_signal));
        else
          dump_pending_ = true;
      }
      status.dump_requested = dump_pending_;
      status.exiting = exit_.exiting();
      const bool news = status.dump_requested || status.exiting;
      if (--ticks_to_round > 0 && !finalizing && !news) continue;
      signals::keep_handlers_first();
      const Summary summary = channel_->allreduce(summarize(status, rank(), thresholds(), step_), state_line(status));
      step_ = Step::None;
      switch (decider_.decide(summary)) {
        case Action::Stop: return;
        case Action::CheckDeadlock: look(/*first=*/true); break;
        case Action::SecondLook: look(/*first=*/false); break;
        case Action::Report: report_confirmed(summary.dump_requested > 0); break;
        case Action::WarnNoProgress: warn_no_progress(); break;
        case Action::CheckOutsideMpi: check_outside_mpi(); break;
        case Action::Dump: dump(); break;
        case Action::ReportExit: report_exit(); return;
        case Action::None: break;
      }
      ticks_to_round = decider_.ticks_until_next_round(summary, settings_.check_interval);
      // Reading the debug info takes a fraction of a second: done ahead of a
      // report that may come, not when it is due.
      if (rank() == 0 && !symbolizer_warm_ && decider_.report_may_come(summary)) {
        const Channel::BoundedWork busy(channel_.get());
        symbolizer_.warm_up();
        symbolizer_warm_ = true;
      }
    }
  }

  // Watching the links meanwhile: a rank lost between rounds is known at once.
  void sleep_until(Clock::time_point when) {
    channel_->watch_until(when, wake_pipe_[0]);  // woken by exit_without_finalize() or DUMP-SIGNAL
    pollfd woken{wake_pipe_[0], POLLIN, 0};
    if (poll(&woken, 1, 0) > 0) {
      char drained[16];
      [[maybe_unused]] ssize_t ignored = read(wake_pipe_[0], drained, sizeof(drained));
    }
  }

  void wake() {
    const char byte = 1;
    [[maybe_unused]] ssize_t ignored = write(wake_pipe_[1], &byte, 1);
  }

  // Every live thread that has called MPI, with its state (through which a waiting thread is asked).
  struct Threads {
    std::vector<const ThreadState*> states;
    std::vector<ThreadState::Sample> samples;
  };
  static Threads sample_threads() {
    Threads threads;
    for_each_thread([&threads](const ThreadState& state) {
      ThreadState::Sample sample;
      // A writer holds the record for nanoseconds: retrying is enough, unless the thread exits.
      bool sampled = false;
      while (!(sampled = state.sample(sample)) && state.live()) std::this_thread::yield();
      if (!sampled) return;
      threads.states.push_back(&state);
      threads.samples.push_back(sample);
    });
    // By thread id: states are reused, so slot order says nothing.
    std::vector<std::size_t> order(threads.samples.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&threads](std::size_t a, std::size_t b) { return threads.samples[a].id < threads.samples[b].id; });
    Threads sorted;
    for (std::size_t i : order) {
      sorted.states.push_back(threads.states[i]);
      sorted.samples.push_back(threads.samples[i]);
    }
    return sorted;
  }

  static OutsideMpi look_outside(const std::vector<ThreadState::Sample>& samples, std::string* why = nullptr) {
    if (!may_be_blocked(samples, untracked_threads())) return {};
    const in_process::Result seen = in_process::look(samples, static_cast<pid_t>(gettid()));
    if (why) *why = seen.why;
    switch (seen.holding) {
      case in_process::Holding::Held: return {OutsideMpi::Kind::Held, seen.digest, seen.tasks};
      case in_process::Holding::Idle: return {OutsideMpi::Kind::Idle, seen.digest, seen.tasks};
      case in_process::Holding::Runs: break;
    }
    return {};
  }

  LocalStatus observe() {
    const Threads threads = sample_threads();
    check_thread_level(threads.samples);
    const LocalStatus status =
        observer_.observe(threads.samples, Clock::now(), untracked_threads(), look_outside(threads.samples));
    std::unordered_map<int, double> thread_seconds;
    for (const ThreadState::Sample& sample : threads.samples)
      thread_seconds[sample.id] = observer_.blocked_seconds(sample.id);
    std::lock_guard lock(status_mutex_);
    status_ = status;
    thread_seconds_ = std::move(thread_seconds);
    return status;
  }

  // This rank's state in a line, as a report prints it: each round tells
  // it to the neighbours, for a report of this rank's loss. Kept short: the
  // round's message stays small.
  std::string state_line(const LocalStatus& status) const {
    constexpr std::size_t kLongest = 300;
    const Threads threads = sample_threads();
    std::string call;
    int in_mpi = 0;
    for (const ThreadState::Sample& sample : threads.samples) {
      if (!sample.in_call || in_mpi++ > 0) continue;
      call = call_text_.format(sample.call, view_requests(sample.call, std::nullopt));
    }
    std::string line = in_mpi == 0        ? std::string("outside MPI")
                       : status.finalizing ? "in " + call
                       : status.blocked    ? fmt::format("blocked for {:.1f} s in {}", status.blocked_seconds, call)
                       : status.polling    ? fmt::format("without progress for {:.1f} s, polling in {}", status.stalled_seconds, call)
                                           : "in " + call;
    if (in_mpi > 1) line += fmt::format(" (and {} more threads in MPI)", in_mpi - 1);
    if (line.size() > kLongest) line = line.substr(0, kLongest - 3) + "...";
    return line;
  }

  // A program that calls MPI from threads its thread level does not allow
  // gets MPI's own behaviour, and one notice.
  void check_thread_level(const std::vector<ThreadState::Sample>& samples) {
    if (thread_level_noticed_ || program_thread_level_ == MPI_THREAD_MULTIPLE) return;
    const ThreadState::Sample* other = nullptr;
    int inside = 0;
    for (const ThreadState::Sample& sample : samples) {
      if (sample.id != 0 && !other) other = &sample;
      inside += sample.in_call ? 1 : 0;
    }
    if (program_thread_level_ <= MPI_THREAD_FUNNELED && other) {
      log::warn("the program runs at {}, yet thread {} (tid {}) called {}: only the thread that initialized "
                "MPI may call it at this level; ask MPI_Init_thread for MPI_THREAD_MULTIPLE",
                thread_level_name(program_thread_level_), other->id, other->tid,
                function_info(other->call.function).name);
      thread_level_noticed_ = true;
    } else if (program_thread_level_ == MPI_THREAD_SERIALIZED && inside > 1) {
      log::warn("the program runs at MPI_THREAD_SERIALIZED, yet {} threads were inside MPI at once: at this level "
                "they must take turns; ask MPI_Init_thread for MPI_THREAD_MULTIPLE",
                inside);
      thread_level_noticed_ = true;
    }
  }

  // This rank as the last tick observed it, every thread's call read now.
  RankSnapshot describe(bool ask_threads) const {
    LocalStatus status;
    std::unordered_map<int, double> thread_seconds;
    {
      std::lock_guard lock(status_mutex_);
      status = status_;
      thread_seconds = thread_seconds_;
    }
    const Threads threads = sample_threads();
    std::vector<Describer::ThreadView> views;
    std::uint64_t activity = threads.samples.size();
    for (std::size_t i = 0; i < threads.samples.size(); ++i) {
      const ThreadState::Sample& sample = threads.samples[i];
      activity = activity * 0x9E3779B97F4A7C15ull + sample.entered + sample.starts + sample.progress;
      Describer::ThreadView view{sample, threads.states[i]};
      const CallKind kind = function_info(sample.call.function).kind;
      if (sample.in_call && kind == CallKind::Blocking) {
        view.state = sample.call.shape == CallShape::Finalize ? RankState::Finalizing : RankState::Blocked;
        view.seconds = thread_seconds[sample.id];
      } else if (status.polling && kind == CallKind::Polling) {
        view.state = RankState::Polling;
        view.seconds = status.stalled_seconds;
      }
      views.push_back(view);
    }
    // A rank blocked through threads held outside MPI is so at this look
    // only when they are held still, unchanged since the tick: their digest
    // (with their context switches) joins the activity, so that two looks
    // agree only when none of them ran in between.
    bool blocked = status.blocked;
    std::size_t held_tasks = 0;
    if (status.held_outside) {
      const OutsideMpi now = look_outside(threads.samples);
      blocked = now.kind == OutsideMpi::Kind::Held && now.digest == status.outside_digest;
      held_tasks = blocked ? now.tasks : 0;
      activity = activity * 0x9E3779B97F4A7C15ull + now.digest;
    }
    const RankState rank_state = status.finalizing             ? RankState::Finalizing
                                 : blocked                    ? RankState::Blocked
                                 : status.polling             ? RankState::Polling
                                                              : RankState::Running;
    const double rank_seconds = rank_state == RankState::Polling ? status.stalled_seconds : status.blocked_seconds;
    RankSnapshot snapshot = describer_.describe(rank_state, rank_seconds, activity, views, ask_threads);
    snapshot.held_tasks = static_cast<std::uint32_t>(held_tasks);
    if (exit_.exiting()) snapshot.exit_status = exit_.status();
    return snapshot;
  }

  // Where each thread of the snapshot is, for a report. Located here,
  // symbolized once for all ranks by rank 0.
  std::vector<std::string> locate_stacks(const RankSnapshot& snapshot) const {
    const Threads threads = sample_threads();
    std::vector<std::string> located;
    for (const ThreadSnapshot& thread : snapshot.threads) {
      std::vector<stacks::FrameAddress> frames;
      for (std::size_t i = 0; i < threads.samples.size(); ++i) {
        const ThreadState::Sample& sample = threads.samples[i];
        if (sample.id != thread.id) continue;
        // Inside an MPI call (by its record, read again right before the
        // signal) a thread may be interrupted in a system call: the checker's
        // own sleeps end early and test again, MPI's calls are MPI's to
        // restart, and the unwind is exact. Outside MPI, never.
        const auto in_mpi = [state = threads.states[i], generation = sample.generation] {
          ThreadState::Sample now;
          return state->sample(now) && now.generation == generation && now.in_call;
        };
        stacks::RawStack raw;
        if (signals::capture_stack(sample.tid, raw, kStackTimeout, in_mpi) != stacks::Capture::None)
          frames = stacks::locate(raw);
      }
      located.push_back(stacks::serialize(frames));
    }
    return located;
  }

  // Every rank's state, and with `with_stacks` where its threads' stacks are
  // (symbolized only for a report), at rank 0 in one gather; empty elsewhere.
  struct Gathered {
    std::vector<RankSnapshot> ranks;
    std::vector<std::vector<std::string>> frames;  // stacks::serialize'd, by rank and thread
  };
  Gathered gather_ranks(bool with_stacks) {
    const RankSnapshot mine = describe(/*ask_threads=*/true);
    std::vector<std::string> frames;
    if (with_stacks) {
      const Channel::BoundedWork busy(channel_.get());
      frames = locate_stacks(mine);
    }
    const std::vector<std::string> parts = channel_->gather(encode_gathered(mine, with_stacks, frames));
    Gathered gathered;
    try {
      for (const std::string& part : parts) {
        GatheredRank rank = decode_gathered(part, with_stacks);
        gathered.ranks.push_back(std::move(rank.snapshot));
        gathered.frames.push_back(std::move(rank.frames));
      }
    } catch (const std::exception& error) {
      log::error("cannot read the ranks' states: {}", error.what());
      gathered = {};
    }
    return gathered;
  }

  Thresholds thresholds() const {
    return Thresholds{config::proven_after(settings_.deadlock_timeout), settings_.deadlock_warning,
                      settings_.check_hard || settings_.check_potential, settings_.check_no_progress,
                      settings_.check_outside_mpi};
  }

  JudgeSettings judge_settings() const {
    return {to_seconds(config::proven_after(settings_.deadlock_timeout)),
            to_seconds(config::any_verdict_after(settings_.deadlock_timeout)), to_seconds(settings_.deadlock_warning)};
  }

  // A look at every rank's state. Rank 0 judges: a verdict in view asks for a
  // second look; seen again with no progress in between, for the report.
  void look(bool first) {
    Gathered gathered = gather_ranks(/*with_stacks=*/false);
    if (rank() != 0 || gathered.ranks.empty()) return;
    Verdict verdict = judge(gathered.ranks, judge_settings());
    if (!enabled(verdict)) {
      pending_.reset();
      return;
    }
    const auto now = Clock::now();
    if (first || !pending_ || !confirms(pending_->verdict, pending_->ranks, verdict, gathered.ranks)) {
      pending_ = Look{std::move(verdict), std::move(gathered.ranks), now};
      step_ = Step::SecondLook;
      return;
    }
    pending_->seconds_between = to_seconds(std::chrono::duration_cast<std::chrono::microseconds>(now - pending_->at));
    pending_->ranks = std::move(gathered.ranks);
    step_ = Step::Report;
  }

  // A verdict whose check is on, and a warning not given for the same cycle before.
  bool enabled(const Verdict& verdict) const {
    switch (verdict.kind) {
      case Verdict::Kind::None: return false;
      case Verdict::Kind::Hard: return true;
      case Verdict::Kind::Slow: return settings_.check_no_progress && !warned_.contains(signature(verdict));
      case Verdict::Kind::Unsafe: return settings_.check_unsafe && !warned_.contains(signature(verdict));
    }
    return false;
  }

  static std::string signature(const Verdict& verdict) {
    return verdict.rule + '|' + fmt::format("{}", fmt::join(verdict.involved, ","));
  }

  // The stacks are taken only now, for a verdict seen twice: ranks that only
  // compute are never signalled otherwise. A third look comes with them, and
  // must agree too.
  // A dump asked for meanwhile is merged into the report, or made of the
  // same gathered states when the verdict is not confirmed.
  void report_confirmed(bool dump_requested) {
    if (dump_requested) begin_dump();
    Gathered gathered = gather_ranks(/*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    std::optional<Look> confirmed = std::move(pending_);
    pending_.reset();
    const Verdict latest = judge(gathered.ranks, judge_settings());
    if (confirmed && confirms(confirmed->verdict, confirmed->ranks, latest, gathered.ranks)) {
      if (dump_requested)
        log::info("the dump asked for by {} is the report that follows", report::signal_name(settings_.dump_signal));
      publish(latest, confirmed->seconds_between, std::move(gathered));
    } else if (dump_requested) {
      publish_dump(std::move(gathered));
    }
  }

  void begin_dump() {
    dump_pending_ = false;
    last_dump_began_ = Clock::now();
  }

  // Every rank's state and stack now, written by rank 0; the program goes on.
  void dump() {
    begin_dump();
    Gathered gathered = gather_ranks(/*with_stacks=*/true);
    if (rank() == 0 && !gathered.ranks.empty()) publish_dump(std::move(gathered));
  }

  void publish_dump(Gathered gathered) {
    symbolize_into(gathered);
    write_report(reports::dump_report(std::move(gathered.ranks), settings_));
  }

  // Ranks blocked past DEADLOCK-WARNING: a warning when they wait for ranks
  // outside MPI and the culprits or their stacks changed since the last one.
  // The stacks are taken only when there are culprits.
  // When no rank outside MPI explains the wait and no verdict covers it, a
  // NO_PROGRESS warning says so (unexplained_stall), once per stall: a hang
  // is never silent.
  void check_outside_mpi() {
    const Gathered states = gather_ranks(/*with_stacks=*/false);
    const double warning = to_seconds(settings_.deadlock_warning);
    std::int32_t found = 0;
    if (rank() == 0 && !states.ranks.empty()) {
      if (!waitgraph::find_outside_mpi(states.ranks, warning).empty())
        found = 1;
      else if (settings_.check_no_progress && unexplained_stall(states.ranks, warning).kind != Verdict::Kind::None)
        found = 2;
    }
    found = channel_->broadcast(found);
    if (found == 0) return;
    Gathered gathered = gather_ranks(/*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    if (found == 2) {
      const Verdict stall = unexplained_stall(gathered.ranks, warning);
      if (stall.kind == Verdict::Kind::None) return;
      std::string key = signature(stall);
      for (int waiting : stall.involved)
        key += fmt::format(";{}", gathered.ranks[static_cast<std::size_t>(waiting)].activity);
      if (!unexplained_warned_.insert(key).second) return;
      publish(stall, 0, std::move(gathered));
      return;
    }
    const waitgraph::OutsideMpi outside = waitgraph::find_outside_mpi(gathered.ranks, warning);
    if (outside.empty()) return;
    symbolize_into(gathered);
    const std::string signature = reports::outside_mpi_signature(outside, gathered.ranks);
    if (signature == outside_mpi_warned_) return;
    outside_mpi_warned_ = signature;
    write_report(reports::outside_mpi_report(std::move(gathered.ranks), outside, settings_));
  }

  // A rank exits without MPI_Finalize: rank 0 reports it with every rank's
  // state, then every monitor stops (the exiting rank can no longer take part).
  void report_exit() {
    Gathered gathered = gather_ranks(/*with_stacks=*/true);
    if (rank() == 0 && !gathered.ranks.empty() && settings_.check_exit_before_finalize) {
      symbolize_into(gathered);
      write_report(reports::exit_report(std::move(gathered.ranks)));
    }
    channel_->broadcast(std::int32_t{0});  // the report is written: the exiting rank may go
    if (rank() == 0) log::info("checking ends here: a rank exits without MPI_Finalize, the monitors can no longer meet");
    exit_.end_checking();
  }

  // Ranks blocked in MPI past DEADLOCK-WARNING that no verdict covers and no
  // rank outside MPI explains: they wait for ranks blocked in waits mpisentry
  // cannot read, or whose threads outside MPI sleep in waits it cannot
  // prove, while other ranks run. A warning, never a verdict.
  Verdict unexplained_stall(const std::vector<RankSnapshot>& ranks, double warning) const {
    Verdict stall;
    for (const RankSnapshot& rank : ranks)
      if (waitgraph::is_stuck(rank, warning)) stall.involved.push_back(rank.rank);
    if (stall.involved.empty() || judge(ranks, judge_settings()).kind != Verdict::Kind::None) return stall;
    stall.kind = Verdict::Kind::Slow;
    stall.partial = true;
    stall.rule = fmt::format(
        "{} {} {} been blocked in MPI for longer than DEADLOCK-WARNING and no deadlock can be proven: what {} wait "
        "for ends at a rank blocked in a wait mpisentry cannot read, or sleeping outside MPI in a wait it cannot "
        "prove only its own process can end, while other ranks run",
        stall.involved.size() == 1 ? "rank" : "ranks", fmt::join(stall.involved, ","),
        stall.involved.size() == 1 ? "has" : "have", stall.involved.size() == 1 ? "it" : "they");
    return stall;
  }

  // Ranks whose threads in MPI are all blocked while the others sleep
  // outside MPI, not provably for good, stall as ranks that poll do.
  static std::vector<int> idle_ranks(const std::vector<RankSnapshot>& ranks) {
    std::vector<int> idle;
    for (const RankSnapshot& rank : ranks) {
      const auto is = [&rank](RankState state) {
        return std::any_of(rank.threads.begin(), rank.threads.end(),
                           [state](const ThreadSnapshot& thread) { return thread.state == state; });
      };
      if (rank.state == RankState::Polling && is(RankState::Blocked) && !is(RankState::Polling))
        idle.push_back(rank.rank);
    }
    return idle;
  }

  void warn_no_progress() {
    Gathered gathered = gather_ranks(/*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    Verdict verdict = reports::no_progress_verdict();
    if (const std::vector<int> idle = idle_ranks(gathered.ranks); !idle.empty())
      verdict.rule += fmt::format(
          "; on {} {} every thread in MPI is blocked and the others sleep outside MPI in waits mpisentry cannot "
          "prove only the rank can end (a wait with a timeout, a futex another process may wake, a program's "
          "signal handler), so no deadlock is claimed",
          idle.size() == 1 ? "rank" : "ranks", fmt::join(idle, ","));
    publish(verdict, 0, std::move(gathered));
  }

  // The ranks of a verdict that are blocked with threads outside MPI: why
  // those threads cannot release them, for the rule line.
  static std::string held_outside_note(const Verdict& verdict, const std::vector<RankSnapshot>& ranks) {
    std::vector<int> held;
    for (int involved : verdict.involved) {
      if (involved < 0 || static_cast<std::size_t>(involved) >= ranks.size()) continue;
      const RankSnapshot& rank = ranks[static_cast<std::size_t>(involved)];
      if (rank.state == RankState::Blocked && rank.held_tasks > 0) held.push_back(rank.rank);
    }
    if (held.empty()) return {};
    return fmt::format(
        "; on {} {} the threads outside MPI sleep in waits that only their own process can end (futex waits with "
        "no timeout, private to the process: pthread_join, a condition variable, a mutex), those that never called "
        "MPI among them, every other thread is blocked in MPI, no other process shares the rank's memory and no "
        "program signal handler is installed, so they cannot release it",
        held.size() == 1 ? "rank" : "ranks", fmt::join(held, ","));
  }

  // Rank 0 only: writes the report; a fatal one ends the job.
  void publish(const Verdict& judged, double seconds_between, Gathered gathered) {
    symbolize_into(gathered);
    Verdict verdict = judged;
    verdict.rule += held_outside_note(verdict, gathered.ranks);
    const report::Report report =
        reports::verdict_report(verdict, seconds_between, std::move(gathered.ranks), settings_);
    const bool fatal = report::aborts_job(report.check);
    if (!fatal) warned_.insert(signature(verdict));
    write_report(report);
    if (fatal) abort_job(report.check);
  }

  // Rank 0: each thread's gathered frames, symbolized, into its snapshot.
  void symbolize_into(Gathered& gathered) {
    const Channel::BoundedWork busy(channel_.get());
    try {
      for (std::size_t rank = 0; rank < gathered.ranks.size() && rank < gathered.frames.size(); ++rank) {
        std::vector<ThreadSnapshot>& threads = gathered.ranks[rank].threads;
        for (std::size_t thread = 0; thread < threads.size() && thread < gathered.frames[rank].size(); ++thread)
          threads[thread].stack =
              symbolizer_.symbolize(stacks::parse_frame_addresses(gathered.frames[rank][thread]));
      }
    } catch (const std::exception& error) {
      log::error("cannot read the ranks' stacks: {}", error.what());
    }
  }

  // Through the report sink: the report file first, then stderr, JSON, DOT;
  // then the page, made from the JSON.
  void write_report(const report::Report& report) {
    // A report that leaves the program running is counted for the summary
    // and ERROR-EXITCODE, or left out by SUPPRESSIONS.
    if (config::can_be_suppressed(config::check_info(report.check))) {
      const config::Suppression* suppression = report::suppression_for(report);
      report::count_monitor_report(report.check, suppression != nullptr);
      if (suppression) {
        log::info("{} left out, as SUPPRESSIONS {} says", report::check_name(report.check), suppression->where);
        return;
      }
    }
    const std::string json =
        settings_.report_json.empty() && settings_.report_html.empty() ? std::string() : report::format_json(report);
    const std::string text = report::format_text(report);
    // A dump on request is the job's state, not a finding.
    const bool wants_ci = report.check != report::Check::Dump && report::sink()->wants_ci();
    const report::CiRecord ci = wants_ci ? report::ci_record(report, text) : report::CiRecord{};
    const bool on_file = report::sink()->write(
        text, settings_.report_json.empty() ? std::string() : json,
        settings_.report_dot.empty() ? std::string() : report::format_dot(report), wants_ci ? &ci : nullptr);
    if (on_file) log::info("report written to {}", report_paths_.text);
    if (settings_.report_html.empty()) return;
    try {
      report::sink()->write_page(report::format_html(json, report_paths_.text));
    } catch (const report::BadReport& bad) {
      log::error("cannot make the report's page for REPORT-HTML {}: {}", report_paths_.html, bad.what());
    }
  }

  const config::Settings& settings_;
  int program_thread_level_;
  bool thread_level_noticed_ = false;
  int rank_;
  std::unique_ptr<Channel> channel_;  // none when the monitors could not connect
  Describer describer_;
  CallText call_text_;  // for state_line
  Observer observer_;
  Decider decider_;
  ReportPaths report_paths_;  // `base` on rank 0 only
  stacks::Symbolizer symbolizer_;  // rank 0's, for every rank's frames
  bool symbolizer_warm_ = false;
  std::thread thread_;
  std::atomic<bool> finalizing_{false};
  // Why the channel broke, written by the monitor's thread before the flag.
  std::string channel_broken_;
  std::atomic<bool> channel_broke_{false};
  int wake_pipe_[2] = {-1, -1};
  mutable std::mutex status_mutex_;
  LocalStatus status_;
  std::unordered_map<int, double> thread_seconds_;  // by thread id, as of the last tick
  // Rank 0's judgement in progress, and what it asks of the next round.
  struct Look {
    Verdict verdict;
    std::vector<RankSnapshot> ranks;
    Clock::time_point at;
    double seconds_between = 0;
  };
  std::optional<Look> pending_;
  Step step_ = Step::None;
  std::set<std::string> warned_;  // warnings given, by verdict: each once
  std::string outside_mpi_warned_;  // culprits and stacks of the last OUTSIDE_MPI warning
  std::set<std::string> unexplained_warned_;  // stalls warned of by unexplained_stall, with their activity
  bool dump_pending_ = false;       // DUMP-SIGNAL reached this rank; carried by each round until the dump
  Clock::time_point last_dump_began_ = Clock::time_point::min() + kDumpMergeTime;
  ExitNotice exit_;  // the program's thread in exit() and the monitor
};

}  // namespace

const ReportPaths& create(const config::Settings& settings, int program_thread_level, MPI_Comm comm) {
  running_monitor = new Monitor(settings, program_thread_level, comm);
  return running_monitor->report_paths();
}

bool checks_deadlocks() { return running_monitor->checks_deadlocks(); }

void start_thread() { running_monitor->start_thread(); }

int wake_fd() { return running_monitor->wake_fd(); }

void write_signal_dump(const signals::Ending& ending, const stacks::RawStack& stack) {
  running_monitor->write_signal_dump(ending, stack);
}

void exit_without_finalize(int status) { running_monitor->exit_without_finalize(status); }

void stop() {
  if (running_monitor) running_monitor->stop();
}

}  // namespace mpisentry::monitor
