// The mpisentry command: checks the whole configuration, then replaces itself
// with the MPI launcher, so that signals and the exit status pass straight
// through. Its statuses, and the job's, are config::kExitStatuses.
// `mpisentry dump PID` asks a running job for a report instead (dump.hpp);
// `mpisentry analyze DIR` reads a run's communication logs (analyze_command.hpp);
// `mpisentry report FILE.json` makes a report's page (report_command.hpp).
#include "config/exit_status.hpp"
#include "launcher/analyze_command.hpp"
#include "launcher/arguments.hpp"
#include "launcher/dump.hpp"
#include "offline/explore.hpp"
#include "launcher/explore_command.hpp"
#include "launcher/job.hpp"
#include "launcher/report_command.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace {

using namespace mpisentry;

void print(const std::vector<config::Problem>& problems) {
  for (const config::Problem& problem : problems) std::cerr << "mpisentry: " << problem.str() << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> words(argv + 1, argv + argc);
  if (!words.empty() && words.front() == launcher::kDumpCommand)
    return launcher::run_dump_command(std::span(words).subspan(1));
  if (!words.empty() && words.front() == launcher::kAnalyzeCommand)
    return launcher::run_analyze_command(std::span(words).subspan(1));
  if (!words.empty() && words.front() == launcher::kReportCommand)
    return launcher::run_report_command(std::span(words).subspan(1));
  const launcher::Arguments args = launcher::parse_arguments(words);
  if (args.help) {
    std::cout << launcher::usage();
    return 0;
  }
  if (args.version) {
    std::cout << "mpisentry " MPISENTRY_VERSION "\n";
    return 0;
  }
  const config::EnvLookup env = [](const char* name) -> const char* { return std::getenv(name); };
  config::LoadResult settings = launcher::resolve_settings(args, env);
  config::name_unknown_variables(config::environment_names(), settings);
  print(settings.notices);
  if (!args.errors.empty() || !settings.ok()) {
    print(args.errors);
    print(settings.errors);
    std::cerr << "mpisentry: nothing was started; see mpisentry --help\n";
    return config::kStoppedStatus;
  }

  std::error_code error;
  const launcher::ProgramMpi program = launcher::find_program_mpi(args, env);
  const launcher::LibrarySearch library =
      launcher::find_library(std::filesystem::read_symlink("/proc/self/exe", error), env, program.family);
  if (library.found.empty()) {
    if (program.family)
      std::cerr << "mpisentry: " << program.program << " loads " << mpi_libraries::name(*program.family) << " ("
                << program.library << "), and no libmpisentry.so for " << mpi_libraries::name(*program.family)
                << " was found; tried:\n";
    else
      std::cerr << "mpisentry: cannot find libmpisentry.so; tried:\n";
    for (const std::string& path : library.tried) std::cerr << "mpisentry:   " << path << '\n';
    std::cerr << "mpisentry: install the library built for the program's MPI (docs/openmpi.md), or set "
                 "MPISENTRY_LIBRARY to its path\n";
    return config::kStoppedStatus;
  }
  for (const auto& [name, value] : launcher::job_environment(args, env, library.found, program.family)) {
    if (::setenv(name.c_str(), value.c_str(), 1) != 0) {
      std::cerr << "mpisentry: cannot set " << name << ": " << std::strerror(errno) << '\n';
      return config::kStoppedStatus;
    }
  }

  // A launcher line names its own launcher: mpiexec is chosen for -n alone.
  std::string mpiexec_command;
  if (args.launcher_line.empty()) {
    const launcher::MpiexecChoice mpiexec = launcher::choose_mpiexec(env, program.family);
    if (mpiexec.other_family)
      std::cerr << "mpisentry: warning: " << program.program << " loads " << mpi_libraries::name(*program.family)
                << ", but mpiexec is " << mpi_libraries::name(*mpiexec.other_family)
                << "'s; set MPISENTRY_MPIEXEC to " << mpi_libraries::name(*program.family) << "'s\n";
    mpiexec_command = mpiexec.command;
  }
  const std::vector<std::string> command = launcher::job_command(args, mpiexec_command);
  if (settings.settings.explore_runs > 0)
    return launcher::run_exploration({settings.settings, command, launcher::replay_arguments(args)});
  std::vector<char*> command_argv;
  for (const std::string& word : command) command_argv.push_back(const_cast<char*>(word.c_str()));
  command_argv.push_back(nullptr);
  ::execvp(command_argv[0], command_argv.data());
  std::cerr << "mpisentry: cannot run " << command[0] << ": " << std::strerror(errno) << '\n';
  return config::kCannotRunStatus;
}
