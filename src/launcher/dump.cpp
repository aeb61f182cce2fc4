#include "launcher/dump.hpp"

#include "config/text.hpp"
#include "launcher/command_line.hpp"
#include "mpi_libraries/mpi_libraries.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdint>
#include <filesystem>

namespace mpisentry::launcher {
namespace {

constexpr std::string_view kCheckerLibrary = "libmpisentry";

std::string pid_list(std::span<const pid_t> pids) {
  std::string text;
  for (const pid_t pid : pids) text += (text.empty() ? "" : ", ") + std::to_string(pid);
  return text;
}

std::span<const OptionSpec> dump_options() {
  static const OptionSpec table[] = {help_option()};
  return table;
}

}  // namespace

DumpArguments parse_dump_arguments(std::span<const std::string> words) {
  const std::string where = "mpisentry dump";
  CommandLine line = parse_command_line(dump_options(), words, Operands::AmongOptions, "the PID", where + ": ");
  DumpArguments args;
  args.errors = std::move(line.errors);
  for (config::Problem& problem : args.errors) problem.message += "; usage: mpisentry dump PID";
  args.help = !line.options.empty();  // --help, the only option
  if (args.help) return args;
  if (line.operands.empty()) {
    if (args.errors.empty()) args.errors.push_back({where, "needs the PID of the job: mpisentry dump PID"});
    return args;
  }
  const std::string& word = line.operands.front();
  long pid = 0;
  const auto [end, status] = std::from_chars(word.data(), word.data() + word.size(), pid);
  if (status != std::errc{} || end != word.data() + word.size() || pid <= 0 || pid > INT32_MAX)
    args.errors.push_back({where, config::in_quotes(word) + " is not a process ID; usage: mpisentry dump PID"});
  else
    args.pid = static_cast<pid_t>(pid);
  if (line.operands.size() > 1) {
    std::string extra;
    for (const std::string& more : std::span(line.operands).subspan(1)) extra += (extra.empty() ? "" : " ") + more;
    args.errors.push_back({where, "takes one PID, and no more: " + config::in_quotes(extra)});
  }
  return args;
}

std::string dump_usage() {
  return "usage: mpisentry dump PID\n"
         "\n"
         "Asks a job started with --dump-signal for a report of every rank's call and\n"
         "stack; rank 0 writes it to the job's report file and the job goes on. PID is\n"
         "the job's launcher: the mpisentry command, which became mpiexec or srun.\n"
         "Reads the job's settings from its environment and sends its DUMP-SIGNAL to PID\n"
         "when that passes it on to the ranks (mpiexec: SIGUSR1; srun: SIGUSR1,\n"
         "SIGUSR2), else to every rank on this host below PID.\n";
}

Environment parse_environ(std::string_view text) {
  Environment env;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = std::min(text.find('\0', start), text.size());
    const std::string_view entry = text.substr(start, end - start);
    // The first value wins, as getenv finds it.
    if (const auto equals = entry.find('='); equals != std::string_view::npos && equals > 0)
      env.emplace(entry.substr(0, equals), entry.substr(equals + 1));
    start = end + 1;
  }
  return env;
}

bool started_by_mpisentry(const Environment& env) {
  if (const auto preload = env.find("LD_PRELOAD"); preload != env.end()) {
    for (const auto library : config::split(preload->second, ": "))
      if (mpi_libraries::file_name(library).starts_with(kCheckerLibrary)) return true;
  }
  // The mpisentry command's own variables may be in any shell's environment.
  return std::ranges::any_of(env, [](const auto& entry) {
    return entry.first.starts_with("MPISENTRY_") && entry.first != config::kLibraryVariable &&
           entry.first != config::kMpiexecVariable;
  });
}

Disposition parse_disposition(std::string_view status, int signal) {
  // "SigIgn:\t0000000000001000": bit N-1 is signal N.
  const auto has_bit = [&](std::string_view field) {
    const auto at = status.find(field);
    if (at == std::string_view::npos) return false;
    const std::string_view hex = config::trim(status.substr(at + field.size(), status.find('\n', at) - at - field.size()));
    std::uint64_t mask = 0;
    std::from_chars(hex.data(), hex.data() + hex.size(), mask, 16);
    return signal >= 1 && signal <= 64 && ((mask >> (signal - 1)) & 1) != 0;
  };
  if (has_bit("\nSigCgt:")) return Disposition::kCaught;
  if (has_bit("\nSigIgn:")) return Disposition::kIgnored;
  return Disposition::kDefault;
}

bool maps_checker(std::string_view maps) {
  for (const auto line : config::split(maps, "\n")) {
    // "address perms offset dev inode path": the path is the rest, when there is one.
    if (const auto path_at = line.find('/'); path_at != std::string_view::npos &&
                                             mpi_libraries::file_name(line.substr(path_at)).starts_with(kCheckerLibrary))
      return true;
  }
  return false;
}

bool has_rank(const Environment& env) { return env.contains("PMI_RANK") || env.contains("PMIX_RANK"); }

bool is_rank(const ProcessState& process) { return process.maps_checker && process.has_rank; }

bool forwards_to_ranks(std::string_view launcher_name, int signal) {
  if (launcher_name == "mpiexec.hydra") return signal == SIGUSR1;
  // Open MPI's mpiexec: orterun (4.x), prterun (5.x).
  if (launcher_name == "srun" || launcher_name == "orterun" || launcher_name == "prterun")
    return signal == SIGUSR1 || signal == SIGUSR2;
  return false;
}

DumpPlan plan_dump(const ProcessState& job, std::span<const ProcessState> descendants, int signal) {
  DumpPlan plan;
  plan.forward = forwards_to_ranks(job.name, signal);
  if (plan.forward) plan.targets.push_back(job.pid);
  // The job's process itself, when it is a rank, takes the signal directly.
  std::vector<ProcessState> processes(descendants.begin(), descendants.end());
  if (!plan.forward) processes.insert(processes.begin(), job);
  for (const ProcessState& process : processes) {
    if (!is_rank(process)) continue;
    if (process.disposition == Disposition::kDefault)
      plan.unready.push_back(process.pid);
    else if (!plan.forward)
      plan.targets.push_back(process.pid);
  }
  return plan;
}

std::string report_location(const std::string& report_file, const std::string& job_directory) {
  const std::string directory = job_directory.empty() ? "the job's working directory" : job_directory;
  if (report_file.empty())
    return "the job's report file named at start-up (mpisentry_<program>_<job ID or time-PID>.txt in " + directory + ")";
  if (report_file.starts_with('/') || job_directory.empty()) return report_file;
  return (std::filesystem::path(job_directory) / report_file).lexically_normal().string();
}

std::string signal_word(int signal) {
  if (signal == SIGUSR1) return "USR1";
  if (signal == SIGUSR2) return "USR2";
  return std::to_string(signal);
}

std::string unready_message(const DumpPlan& plan, int signal) {
  const bool one = plan.unready.size() == 1;
  return fmt::format("{} rank{} on this host (process{} {}) {} no handler for {} yet, before MPI_Init or after "
                     "MPI_Finalize: the signal would end {}. Nothing was sent; try again once the job runs",
                     plan.unready.size(), one ? "" : "s", one ? "" : "es", pid_list(plan.unready), one ? "has" : "have",
                     config::format_signal(signal, "off"), one ? "it" : "them");
}

std::string sent_message(const ProcessState& job, const DumpPlan& plan, int signal, std::string_view report) {
  const std::string name = config::format_signal(signal, "off");
  if (plan.forward)
    return fmt::format("sent {} to process {} ({}), which passes it to every rank; rank 0 writes the report to {}",
                       name, job.pid, job.name, report);
  return fmt::format(
      "sent {} to {} rank{} on this host (process{} {}) below process {} ({}), which does not pass it on; the "
      "checker carries the request on to the ranks on other hosts; rank 0 writes the report to {}",
      name, plan.targets.size(), plan.targets.size() == 1 ? "" : "s", plan.targets.size() == 1 ? "" : "es",
      pid_list(plan.targets), job.pid, job.name, report);
}

}  // namespace mpisentry::launcher
