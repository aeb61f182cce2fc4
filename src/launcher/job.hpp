// What the launcher makes of its arguments and environment: the settings it
// checks, the library it preloads, the variables and the command of the job.
#pragma once

#include "config/settings.hpp"
#include "launcher/arguments.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mpisentry::launcher {

// The environment (with --config as MPISENTRY_CONFIG), then the options, then
// the rules between keys: exactly what every rank will load.
config::LoadResult resolve_settings(const Arguments& args, const config::EnvLookup& env);

struct LibrarySearch {
  std::string found;               // empty if none of the paths exists
  std::vector<std::string> tried;  // in order, for the error message
};

// $MPISENTRY_LIBRARY, else libmpisentry.so beside the launcher: ../lib when
// installed, ../runtime in the build tree (src/launcher, src/runtime).
LibrarySearch find_library(const std::string& launcher_path, const config::EnvLookup& env);

// In a sanitizer build, the sanitizer's runtime, which the library needs
// loaded before every other library; empty in other builds.
inline constexpr std::string_view kSanitizerRuntime = MPISENTRY_SANITIZER_RUNTIME;

// Variables to set for the job: the options as MPISENTRY_<KEY> (CHECK options
// added after the environment's), MPISENTRY_CONFIG as an absolute path, and
// the library put first in LD_PRELOAD (after kSanitizerRuntime), and the
// current directory as kLaunchDirectoryVariable.
std::vector<std::pair<std::string, std::string>> job_environment(const Arguments& args, const config::EnvLookup& env,
                                                                 const std::string& library);

// The command to exec: the launcher line as given, or $MPISENTRY_MPIEXEC (else
// mpiexec) -n N program args...
std::vector<std::string> job_command(const Arguments& args, const config::EnvLookup& env);

}  // namespace mpisentry::launcher
