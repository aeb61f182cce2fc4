// Loading the settings: defaults, then the config file, then the
// environment (and, in the launcher, its options in between), each line
// and variable checked against flags.def and checks.def, with where each
// problem is.
#pragma once

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/settings.hpp"

namespace mpisentry::config {

// Where a setting came from, for messages: "job.conf:12", "MPISENTRY_VERBOSE".
struct Problem {
  std::string where;
  std::string message;
  std::string str() const { return where + ": " + message; }
};

struct LoadResult {
  Settings settings;
  std::vector<Problem> errors;   // any error stops the run before the program starts
  std::vector<Problem> notices;  // accepted with a one-line notice (ITC keys not implemented)
  // Key name ("DEADLOCK-TIMEOUT", or a check's name) -> where it was last set;
  // absent while it has its default.
  std::map<std::string, std::string, std::less<>> origin;
  bool ok() const { return errors.empty(); }
};

using EnvLookup = std::function<const char*(const char* name)>;

// The variables named MPISENTRY_* other than MPISENTRY_<KEY>.
inline constexpr const char* kConfigVariable = "MPISENTRY_CONFIG";
// Set by the launcher, which has shown the notices already, so that rank 0
// does not show them a second time.
inline constexpr const char* kNoticesShownVariable = "MPISENTRY_NOTICES_SHOWN";
// Set by the launcher: the directory the user started mpisentry in, where
// relative report paths lead (the ranks' own directories may differ).
inline constexpr const char* kLaunchDirectoryVariable = "MPISENTRY_LAUNCH_DIRECTORY";
// Read by the launcher alone: the library to preload, the command to run.
inline constexpr const char* kLibraryVariable = "MPISENTRY_LIBRARY";
inline constexpr const char* kMpiexecVariable = "MPISENTRY_MPIEXEC";

// A misspelt variable would leave its setting at the default unnoticed: each
// MPISENTRY_* name in `names` that mpisentry does not read gets a notice
// with the nearest name it reads.
void name_unknown_variables(std::span<const std::string> names, LoadResult& into);
// The names of this process's environment variables.
std::vector<std::string> environment_names();

// Defaults, then the file named by MPISENTRY_CONFIG (else VT_CONFIG), then
// VT_<KEY> variables, then MPISENTRY_<KEY> variables, each overriding the last.
LoadResult load(const EnvLookup& env);

// The pieces, for the launcher and the tests. load() is apply_environment()
// then check_consistency(); the launcher applies its options in between.
void apply_environment(const EnvLookup& env, LoadResult& into);
// The rules between keys, checked once every source is applied.
void check_consistency(LoadResult& into);
void apply_file(std::string_view path, LoadResult& into);
void apply_text(std::string_view text, std::string_view source_name, LoadResult& into);
// One key's value from any source; `where` names the source in messages.
void apply_setting(std::string_view key, std::string_view value, std::string_view where, LoadResult& into);

}  // namespace mpisentry::config
