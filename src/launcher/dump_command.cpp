// `mpisentry dump PID` on a real process: its environment and settings, its
// descendants, the signal. Exit status 2 when nothing could be sent.
#include "config/exit_status.hpp"
#include "launcher/dump.hpp"
#include "launcher/processes.hpp"

#include <fmt/format.h>

#include <csignal>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace mpisentry::launcher {
namespace {

class Reporter {
 public:
  explicit Reporter(pid_t pid) : where_(fmt::format("mpisentry dump: process {}", pid)) {}
  void name(const std::string& process_name) { where_ += " (" + process_name + ")"; }
  int fail(std::string_view message) const {
    std::cerr << where_ << ": " << message << '\n';
    return config::kCommandFailedStatus;
  }

 private:
  std::string where_;
};

std::string unreadable(int error) {
  if (error == ENOENT || error == ESRCH) return "no such process";
  if (error == EACCES || error == EPERM)
    return "not permitted to read its environment; run mpisentry dump as the user who started the job";
  return std::string("cannot read its environment: ") + std::strerror(error);
}

// The config file a rank reads, relative to its working directory (the job's).
Environment with_absolute_config(Environment env, const std::string& job_directory) {
  if (job_directory.empty()) return env;
  for (const char* name : {config::kConfigVariable, "VT_CONFIG"}) {
    const auto entry = env.find(name);
    if (entry != env.end() && !entry->second.empty() && !entry->second.starts_with('/'))
      entry->second = (std::filesystem::path(job_directory) / entry->second).lexically_normal().string();
  }
  return env;
}

}  // namespace

int run_dump_command(std::span<const std::string> words) {
  const DumpArguments args = parse_dump_arguments(words);
  if (args.help) {
    std::cout << dump_usage();
    return 0;
  }
  if (!args.errors.empty()) {
    for (const config::Problem& problem : args.errors) std::cerr << problem.str() << '\n';
    return config::kCommandFailedStatus;
  }
  Reporter report(args.pid);
  std::string environ_text;
  if (!read_proc_file(args.pid, "environ", environ_text)) return report.fail(unreadable(errno));
  report.name(process_name(args.pid));

  const Environment env = parse_environ(environ_text);
  if (!started_by_mpisentry(env))
    return report.fail(
        "was not started by mpisentry: no libmpisentry in its LD_PRELOAD and no MPISENTRY_ variables in its "
        "environment. To dump a job that has the checker some other way, start it with DUMP-SIGNAL set "
        "(MPISENTRY_DUMP_SIGNAL=SIGUSR1, or in its config file) and send that signal yourself: kill -s USR1 "
        "MPIEXEC_PID (hydra's mpiexec passes it to the ranks), or scancel --signal=USR1 JOBID under Slurm");

  const std::string job_directory = working_directory(args.pid);
  const Environment config_env = with_absolute_config(env, job_directory);
  const config::LoadResult settings = config::load([&](const char* name) -> const char* {
    const auto entry = config_env.find(std::string_view(name));
    return entry == config_env.end() ? nullptr : entry->second.c_str();
  });
  if (!settings.ok()) {
    for (const config::Problem& problem : settings.errors) report.fail("its settings: " + problem.str());
    return report.fail("its settings have the errors above, so its dump signal is unknown; nothing was sent");
  }
  const int signal = settings.settings.dump_signal;
  if (signal == config::kUnsetSignal)
    return report.fail(
        "the job has DUMP-SIGNAL off, so it cannot be dumped; it must be started with --dump-signal SIGUSR1 "
        "(or MPISENTRY_DUMP_SIGNAL=SIGUSR1); nothing was sent");

  ProcessState job;
  if (!read_process_state(args.pid, signal, job)) return report.fail("has ended");
  std::vector<ProcessState> below;
  for (const pid_t pid : descendants(args.pid)) {
    ProcessState state;
    if (read_process_state(pid, signal, state)) below.push_back(state);
  }
  const DumpPlan plan = plan_dump(job, below, signal);
  const std::string signal_name = config::format_signal(signal, "off");
  if (!plan.unready.empty()) return report.fail(unready_message(plan, signal));
  if (plan.targets.empty())
    return report.fail(fmt::format("{} does not pass {} on to the ranks, and no rank of the job runs below it on "
                                   "this host; send it to the ranks where they run (scancel --signal={} JOBID)",
                                   job.name, signal_name, signal_word(signal)));
  bool all_sent = true;
  for (const pid_t target : plan.targets) {
    if (::kill(target, signal) == 0) continue;
    all_sent = false;
    Reporter(target).fail(errno == ESRCH ? "has ended" : "cannot send it " + signal_name + ": " + std::strerror(errno));
  }
  if (!all_sent) return report.fail("the signal did not reach every process above; the dump may lack ranks");
  std::cout << "mpisentry dump: "
            << sent_message(job, plan, signal, report_location(settings.settings.report_file, job_directory)) << '\n';
  return 0;
}

}  // namespace mpisentry::launcher
