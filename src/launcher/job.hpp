// What the launcher makes of its arguments and environment: the settings it
// checks, the library it preloads, the variables and the command of the job.
#pragma once

#include "config/loading.hpp"
#include "config/settings.hpp"
#include "launcher/arguments.hpp"
#include "mpi_libraries/mpi_libraries.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpisentry::launcher {

// The environment (with --config as MPISENTRY_CONFIG), then the options, then
// the rules between keys: exactly what every rank will load.
config::LoadResult resolve_settings(const Arguments& args, const config::EnvLookup& env);

// The MPI a job's program loads; all empty when none was found.
struct ProgramMpi {
  std::string program;  // the program's file
  std::optional<mpi_libraries::Family> family;
  std::string library;  // the MPI library that ldd lists for it
};

// The program of -n N, else the first word of the launcher line after the
// launcher itself that names an executable file (found in PATH when it has no
// slash) for which ldd lists an MPI library.
ProgramMpi find_program_mpi(const Arguments& args, const config::EnvLookup& env);

// The first MPI library that ldd's output lists, and its family.
std::optional<std::pair<mpi_libraries::Family, std::string>> mpi_in_ldd_output(std::string_view output);

struct LibrarySearch {
  std::string found;               // empty if none of the paths exists
  std::vector<std::string> tried;  // in order, for the error message
};

// Where an MPI's library installs: relative to the launcher's directory
// (../lib/<triplet>/mpisentry and its openmpi/), and the configured
// directory.
struct InstalledLibraryDir {
  std::string from_launcher;
  std::string configured;
};
InstalledLibraryDir installed_library_dir(mpi_libraries::Family family);

// $MPISENTRY_LIBRARY, else libmpisentry.so for the program's MPI: in that
// MPI's directory relative to the launcher (an install, also moved elsewhere);
// in the build tree, ../runtime (src/launcher, src/runtime) when the build is
// for that MPI; in the MPI's configured directory. A program of no known MPI
// gets MPICH's, else this build's MPI's.
LibrarySearch find_library(const std::string& launcher_path, const config::EnvLookup& env,
                           std::optional<mpi_libraries::Family> program_family);

// In a sanitizer build, the sanitizer's runtime, which the library needs
// loaded before every other library; empty in other builds.
inline constexpr std::string_view kSanitizerRuntime = MPISENTRY_SANITIZER_RUNTIME;

// Open MPI's mpiexec sends SIGKILL this long after SIGTERM (1 s by default),
// unless the job's environment says otherwise: time for each rank's dump on
// SIGTERM (signals::kMaxDumpTime) and its own default action after it.
inline constexpr const char* kOpenMpiSigkillVariable = "OMPI_MCA_odls_base_sigkill_timeout";
inline constexpr int kOpenMpiSigkillSeconds = 4;

// Variables to set for the job: the options as MPISENTRY_<KEY> (CHECK options
// added after the environment's), MPISENTRY_CONFIG as an absolute path, and
// the library put first in LD_PRELOAD (after kSanitizerRuntime), the current
// directory as kLaunchDirectoryVariable, and for a program of Open MPI
// kOpenMpiSigkillVariable when the environment does not set it.
std::vector<std::pair<std::string, std::string>> job_environment(
    const Arguments& args, const config::EnvLookup& env, const std::string& library,
    std::optional<mpi_libraries::Family> program_family = std::nullopt);

struct MpiexecChoice {
  std::string command;
  // Set when the command is another MPI's than the program's, and no
  // mpiexec of the program's MPI was found: for a warning.
  std::optional<mpi_libraries::Family> other_family;
};

// $MPISENTRY_MPIEXEC, else mpiexec; when PATH's mpiexec is another MPI's than
// the program's, the program's by Debian's name for it (mpiexec.mpich,
// mpiexec.openmpi) if PATH has it.
MpiexecChoice choose_mpiexec(const config::EnvLookup& env, std::optional<mpi_libraries::Family> program_family);

// The command to exec: the launcher line as given, or `mpiexec` -n N program
// args...
std::vector<std::string> job_command(const Arguments& args, const std::string& mpiexec);

}  // namespace mpisentry::launcher
