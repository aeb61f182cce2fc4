#include "monitor/monitor.hpp"

#include <mpi.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "log/log.hpp"
#include "monitor/channel.hpp"
#include "monitor/ending.hpp"
#include "monitor/gather.hpp"
#include "monitor/local_view.hpp"
#include "monitor/process_state.hpp"
#include "monitor/publisher.hpp"
#include "monitor/handshake.hpp"
#include "monitor/report_paths.hpp"
#include "monitor/reports.hpp"
#include "monitor/rounds.hpp"
#include "signals/signals.hpp"
#include "monitor/verdict.hpp"
#include "monitor/wait_graph.hpp"
#include "records/lifecycle.hpp"
#include "records/tick.hpp"
#include "comm_log/comm_log.hpp"
#include "races/races.hpp"
#include "report/report.hpp"
#include "report/sink.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::monitor {
namespace {

using namespace std::chrono_literals;

constexpr auto kFinalizingTick = 2ms;  // a finalizing rank's monitor leaves soon after the last one arrives
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
        rank_(rank_in(comm)),
        local_(rank_, program_thread_level, exit_),
        publisher_(settings, report_paths_),
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
    RankSnapshot snapshot = local_.describe(/*ask_threads=*/false);
    // The stack is the signalled thread's: its own when it called MPI.
    ThreadSnapshot* signalled = snapshot.threads.empty() ? nullptr : &snapshot.threads.front();
    const LocalView::Threads threads = LocalView::sample_threads();
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
    publisher_.write_rank_lost(local_.describe(/*ask_threads=*/false), lines, /*with_stacks=*/false);
    end_checking(why, /*broken=*/true);
    // The fuller report: requests confirmed, the stacks symbolized here.
    RankSnapshot mine = local_.describe(/*ask_threads=*/true);
    Gathered own;
    own.frames.push_back(local_.locate_stacks(mine));
    own.ranks.push_back(std::move(mine));
    symbolize_into(own, publisher_.symbolizer(), *channel_);
    publisher_.write_rank_lost(own.ranks.front(), lines, /*with_stacks=*/true);
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
      LocalStatus status = local_.observe();
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
      const Summary summary = channel_->allreduce(summarize(status, rank(), thresholds(), step_), local_.state_line(status));
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
        publisher_.symbolizer().warm_up();
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
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/false);
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
      case Verdict::Kind::Slow: return settings_.check_no_progress && !publisher_.warned(verdict);
      case Verdict::Kind::Unsafe: return settings_.check_unsafe && !publisher_.warned(verdict);
    }
    return false;
  }

  // The stacks are taken only now, for a verdict seen twice: ranks that only
  // compute are never signalled otherwise. A third look comes with them, and
  // must agree too.
  // A dump asked for meanwhile is merged into the report, or made of the
  // same gathered states when the verdict is not confirmed.
  void report_confirmed(bool dump_requested) {
    if (dump_requested) begin_dump();
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    std::optional<Look> confirmed = std::move(pending_);
    pending_.reset();
    const Verdict latest = judge(gathered.ranks, judge_settings());
    if (confirmed && confirms(confirmed->verdict, confirmed->ranks, latest, gathered.ranks)) {
      if (dump_requested)
        log::info("the dump asked for by {} is the report that follows", report::signal_name(settings_.dump_signal));
      publisher_.publish(latest, confirmed->seconds_between, std::move(gathered), *channel_);
    } else if (dump_requested) {
      publisher_.publish_dump(std::move(gathered), *channel_);
    }
  }

  void begin_dump() {
    dump_pending_ = false;
    last_dump_began_ = Clock::now();
  }

  // Every rank's state and stack now, written by rank 0; the program goes on.
  void dump() {
    begin_dump();
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/true);
    if (rank() == 0 && !gathered.ranks.empty()) publisher_.publish_dump(std::move(gathered), *channel_);
  }

  // Ranks blocked past DEADLOCK-WARNING: a warning when they wait for ranks
  // outside MPI and the culprits or their stacks changed since the last one.
  // The stacks are taken only when there are culprits.
  // When no rank outside MPI explains the wait and no verdict covers it, a
  // NO_PROGRESS warning says so (unexplained_stall), once per stall: a hang
  // is never silent.
  void check_outside_mpi() {
    const Gathered states = gather_ranks(local_, *channel_, /*with_stacks=*/false);
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
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    if (found == 2) {
      const Verdict stall = unexplained_stall(gathered.ranks, warning);
      if (stall.kind == Verdict::Kind::None) return;
      std::string key = verdict_signature(stall);
      for (int waiting : stall.involved)
        key += fmt::format(";{}", gathered.ranks[static_cast<std::size_t>(waiting)].activity);
      if (!unexplained_warned_.insert(key).second) return;
      publisher_.publish(stall, 0, std::move(gathered), *channel_);
      return;
    }
    const waitgraph::OutsideMpi outside = waitgraph::find_outside_mpi(gathered.ranks, warning);
    if (outside.empty()) return;
    symbolize_into(gathered, publisher_.symbolizer(), *channel_);
    const std::string signature = reports::outside_mpi_signature(outside, gathered.ranks);
    if (signature == outside_mpi_warned_) return;
    outside_mpi_warned_ = signature;
    publisher_.write_report(reports::outside_mpi_report(std::move(gathered.ranks), outside, settings_));
  }

  // A rank exits without MPI_Finalize: rank 0 reports it with every rank's
  // state, then every monitor stops (the exiting rank can no longer take part).
  void report_exit() {
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/true);
    if (rank() == 0 && !gathered.ranks.empty() && settings_.check_exit_before_finalize) {
      symbolize_into(gathered, publisher_.symbolizer(), *channel_);
      publisher_.write_report(reports::exit_report(std::move(gathered.ranks)));
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
    Gathered gathered = gather_ranks(local_, *channel_, /*with_stacks=*/true);
    if (rank() != 0 || gathered.ranks.empty()) return;
    Verdict verdict = reports::no_progress_verdict();
    if (const std::vector<int> idle = idle_ranks(gathered.ranks); !idle.empty())
      verdict.rule += fmt::format(
          "; on {} {} every thread in MPI is blocked and the others sleep outside MPI in waits mpisentry cannot "
          "prove only the rank can end (a wait with a timeout, a futex another process may wake, a program's "
          "signal handler), so no deadlock is claimed",
          idle.size() == 1 ? "rank" : "ranks", fmt::join(idle, ","));
    publisher_.publish(verdict, 0, std::move(gathered), *channel_);
  }

  const config::Settings& settings_;
  ExitNotice exit_;  // the program's thread in exit() and the monitor; before local_, which reads it
  int rank_;
  std::unique_ptr<Channel> channel_;  // none when the monitors could not connect
  ReportPaths report_paths_;  // before publisher_, which reads it
  LocalView local_;
  Publisher publisher_;
  Decider decider_;
  bool symbolizer_warm_ = false;
  std::thread thread_;
  std::atomic<bool> finalizing_{false};
  // Why the channel broke, written by the monitor's thread before the flag.
  std::string channel_broken_;
  std::atomic<bool> channel_broke_{false};
  int wake_pipe_[2] = {-1, -1};
  // Rank 0's judgement in progress, and what it asks of the next round.
  struct Look {
    Verdict verdict;
    std::vector<RankSnapshot> ranks;
    Clock::time_point at;
    double seconds_between = 0;
  };
  std::optional<Look> pending_;
  Step step_ = Step::None;
  std::string outside_mpi_warned_;  // culprits and stacks of the last OUTSIDE_MPI warning
  std::set<std::string> unexplained_warned_;  // stalls warned of by unexplained_stall, with their activity
  bool dump_pending_ = false;       // DUMP-SIGNAL reached this rank; carried by each round until the dump
  Clock::time_point last_dump_began_ = Clock::time_point::min() + kDumpMergeTime;
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
