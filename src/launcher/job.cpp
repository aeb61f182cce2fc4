#include "launcher/job.hpp"

#include "config/keys.hpp"
#include "config/suppressions.hpp"
#include "config/text.hpp"
#include "signals/signals.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <sstream>

namespace mpisentry::launcher {
namespace {

using config::non_empty;

namespace fs = std::filesystem;

// The ranks may start in another directory. Left as given if the current
// directory is gone; reading it then reports the problem.
std::string absolute(const std::string& path) {
  std::error_code error;
  const fs::path full = fs::absolute(path, error);
  return error ? path : full.lexically_normal().string();
}

std::string absolute_config(const Arguments& args) {
  return args.config_file.empty() ? std::string() : absolute(args.config_file);
}

using mpi_libraries::Family;

bool is_executable_file(const std::string& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && ::access(path.c_str(), X_OK) == 0;
}

// As execvp finds it: a name with a slash as it is, else the first PATH entry
// that has it; empty when none.
std::string find_executable(const std::string& name, const config::EnvLookup& env) {
  if (name.find('/') != std::string::npos) return is_executable_file(name) ? name : std::string();
  const char* path = non_empty(env("PATH"));
  std::istringstream entries(path ? path : "");
  for (std::string directory; std::getline(entries, directory, ':');) {
    const std::string candidate = (fs::path(directory.empty() ? "." : directory) / name).string();
    if (is_executable_file(candidate)) return candidate;
  }
  return {};
}

// What `ldd file` prints; empty when it fails (a script, a static program).
// Without LD_PRELOAD, whose libraries ldd would list first.
std::string ldd_output(const std::string& file) {
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::unsetenv("LD_PRELOAD");
    ::dup2(out[1], STDOUT_FILENO);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    ::execlp("ldd", "ldd", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string output;
  char buffer[4096];
  for (ssize_t got; child > 0 && (got = ::read(out[0], buffer, sizeof buffer)) != 0;) {
    if (got > 0) output.append(buffer, static_cast<std::size_t>(got));
    else if (errno != EINTR) break;
  }
  ::close(out[0]);
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return {};
  return output;
}

// Debian installs each MPI's mpiexec under these names too.
std::string_view debian_mpiexec(Family family) {
  return family == Family::open_mpi ? "mpiexec.openmpi" : "mpiexec.mpich";
}

// The MPI an mpiexec belongs to: MPICH's Hydra by its name (it links no MPI
// library), Open MPI's (orterun, prterun) by the runtime it links.
std::optional<Family> mpiexec_family(const std::string& path) {
  std::error_code error;
  const fs::path real = fs::canonical(path, error);
  if (error) return std::nullopt;
  if (real.filename().string().starts_with("mpiexec.hydra")) return Family::mpich;
  const auto found = mpi_in_ldd_output(ldd_output(real.string()));
  return found ? std::optional(found->first) : std::nullopt;
}

}  // namespace

config::LoadResult resolve_settings(const Arguments& args, const config::EnvLookup& env) {
  const std::string config_file = absolute_config(args);
  const config::EnvLookup job_env = [&](const char* name) {
    return !config_file.empty() && std::string_view(name) == config::kConfigVariable ? config_file.c_str() : env(name);
  };
  config::LoadResult result;
  config::apply_environment(job_env, result);
  for (const OptionSetting& setting : args.settings) config::apply_setting(setting.key, setting.value, setting.option, result);
  config::check_consistency(result);
  // Each rank reads the file again in MPI_Init; a bad line stops the job here, before it starts.
  if (result.ok() && !result.settings.suppressions_file.empty())
    config::read_suppressions(result.settings.suppressions_file, result.errors);
  // The ranks of an exploration's runs see EXPLORE with RECORD and REPLAY,
  // which the explorer sets for each run: the rule is the launcher's.
  const config::Settings& settings = result.settings;
  const auto explore_conflict = !settings.record_dir.empty()    ? &config::Settings::record_dir
                                : !settings.replay_dir.empty()  ? &config::Settings::replay_dir
                                : !settings.comm_log_dir.empty() ? &config::Settings::comm_log_dir
                                                                 : nullptr;
  if (settings.explore_runs > 0 && explore_conflict) {
    const std::string_view explore = config::name_of(&config::Settings::explore_runs);
    const std::string_view other = config::name_of(explore_conflict);
    const auto where = [&](std::string_view key) {
      const auto origin = result.origin.find(key);
      return origin == result.origin.end() ? std::string("default") : origin->second;
    };
    result.errors.push_back({where(other), fmt::format("{} and {} ({}) are both set: an exploration runs the "
                                                       "program many times, each run with recordings of its own, "
                                                       "in {}",
                                                       other, explore, where(explore),
                                                       config::name_of(&config::Settings::explore_dir))});
  }
  return result;
}

std::optional<std::pair<Family, std::string>> mpi_in_ldd_output(std::string_view output) {
  // Lines of "\tsoname => path (address)" or "\tpath (address)".
  std::istringstream lines{std::string(output)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name, arrow, path;
    words >> name >> arrow >> path;
    if (const auto family = mpi_libraries::family_of(name))
      return std::pair(*family, arrow == "=>" && path.starts_with('/') ? path : name);
  }
  return std::nullopt;
}

ProgramMpi find_program_mpi(const Arguments& args, const config::EnvLookup& env) {
  const std::vector<std::string>& words = args.program.empty() ? args.launcher_line : args.program;
  const std::size_t first = args.program.empty() ? 1 : 0;  // a launcher line's launcher links its own MPI
  const std::size_t last = args.program.empty() ? words.size() : std::min<std::size_t>(words.size(), 1);
  for (std::size_t i = first; i < last; ++i) {
    const std::string file = find_executable(words[i], env);
    if (file.empty()) continue;
    if (const auto mpi = mpi_in_ldd_output(ldd_output(file))) return {file, mpi->first, mpi->second};
  }
  return {};
}

InstalledLibraryDir installed_library_dir(Family family) {
  if (family == Family::open_mpi) return {MPISENTRY_LIBDIR_OPEN_MPI_FROM_BINDIR, MPISENTRY_LIBDIR_OPEN_MPI_FULL};
  return {MPISENTRY_LIBDIR_MPICH_FROM_BINDIR, MPISENTRY_LIBDIR_MPICH_FULL};
}

LibrarySearch find_library(const std::string& launcher_path, const config::EnvLookup& env,
                           std::optional<Family> program_family) {
  LibrarySearch search;
  if (const char* library = non_empty(env(config::kLibraryVariable))) {
    search.tried.emplace_back(library);
  } else {
    const fs::path launcher_dir = fs::path(launcher_path).parent_path();
    // A path relative to the launcher's directory, or absolute.
    const auto add = [&](const fs::path& library) {
      const std::string path = (launcher_dir / library).lexically_normal().string();
      if (std::find(search.tried.begin(), search.tried.end(), path) == search.tried.end()) search.tried.push_back(path);
    };
    const std::vector<Family> families =
        program_family ? std::vector{*program_family} : std::vector{Family::mpich, mpi_libraries::kBuiltFor};
    for (const Family family : families) add(fs::path(installed_library_dir(family).from_launcher) / "libmpisentry.so");
    // The build tree's launcher takes its own library before an installed one.
    if (program_family.value_or(mpi_libraries::kBuiltFor) == mpi_libraries::kBuiltFor)
      add("../runtime/libmpisentry.so");
    for (const Family family : families) add(fs::path(installed_library_dir(family).configured) / "libmpisentry.so");
  }
  for (const std::string& path : search.tried) {
    std::error_code error;
    if (fs::is_regular_file(path, error)) {
      search.found = absolute(path);
      break;
    }
  }
  return search;
}

std::vector<std::pair<std::string, std::string>> job_environment(const Arguments& args, const config::EnvLookup& env,
                                                                 const std::string& library,
                                                                 std::optional<Family> program_family) {
  // By name, so that a repeated option leaves its last value.
  std::map<std::string, std::string> variables;
  const std::string check_variable = config::env_name("MPISENTRY_", config::check_key);
  for (const OptionSetting& setting : args.settings) {
    const std::string name = config::env_name("MPISENTRY_", setting.key);
    if (name != check_variable) {
      variables[name] = setting.value;
      continue;
    }
    // CHECK lines add up in order: the options come after the environment's.
    const char* from_env = non_empty(env(name.c_str()));
    const auto entry = variables.try_emplace(name, from_env ? from_env : "").first;
    entry->second += (entry->second.empty() ? "" : "; ") + setting.value;
  }
  if (!args.config_file.empty()) variables[config::kConfigVariable] = absolute_config(args);
  std::string preload = library;
  if (const char* inherited = non_empty(env("LD_PRELOAD"))) preload += fmt::format(":{}", inherited);
  // The dynamic loader loads a library named twice once, so a runtime that
  // the inherited list already has does no harm.
  if (!kSanitizerRuntime.empty()) preload = fmt::format("{}:{}", kSanitizerRuntime, preload);
  variables["LD_PRELOAD"] = preload;
  variables.emplace(config::kNoticesShownVariable, "1");
  static_assert(std::chrono::seconds(kOpenMpiSigkillSeconds) > signals::kMaxDumpTime + std::chrono::seconds(1));
  if (program_family == Family::open_mpi && !env(kOpenMpiSigkillVariable))
    variables[kOpenMpiSigkillVariable] = std::to_string(kOpenMpiSigkillSeconds);
  std::error_code error;
  if (const fs::path here = fs::current_path(error); !error) variables[config::kLaunchDirectoryVariable] = here.string();
  return {variables.begin(), variables.end()};
}

MpiexecChoice choose_mpiexec(const config::EnvLookup& env, std::optional<Family> program_family) {
  if (const char* mpiexec = non_empty(env(config::kMpiexecVariable))) return {mpiexec, std::nullopt};
  MpiexecChoice choice{"mpiexec", std::nullopt};
  if (!program_family) return choice;
  const std::string in_path = find_executable(choice.command, env);
  const std::optional<Family> family = in_path.empty() ? std::nullopt : mpiexec_family(in_path);
  if (!family || *family == *program_family) return choice;
  const std::string programs = std::string(debian_mpiexec(*program_family));
  if (!find_executable(programs, env).empty()) return {programs, std::nullopt};
  choice.other_family = family;
  return choice;
}

std::vector<std::string> job_command(const Arguments& args, const std::string& mpiexec) {
  if (!args.launcher_line.empty()) return args.launcher_line;
  std::vector<std::string> command = {mpiexec, "-n", args.ranks};
  command.insert(command.end(), args.program.begin(), args.program.end());
  return command;
}

}  // namespace mpisentry::launcher
