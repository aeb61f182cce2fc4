#include "launcher/job.hpp"

#include "config/keys.hpp"
#include "config/text.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <map>

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

LibrarySearch find_library(const std::string& launcher_path, const config::EnvLookup& env) {
  LibrarySearch search;
  if (const char* library = non_empty(env(config::kLibraryVariable))) {
    search.tried.emplace_back(library);
  } else {
    const fs::path launcher_dir = fs::path(launcher_path).parent_path();
    for (const char* relative : {"../lib/libmpisentry.so", "../runtime/libmpisentry.so"})
      search.tried.push_back((launcher_dir / relative).lexically_normal().string());
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
                                                                 const std::string& library) {
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
  std::error_code error;
  if (const fs::path here = fs::current_path(error); !error) variables[config::kLaunchDirectoryVariable] = here.string();
  return {variables.begin(), variables.end()};
}

std::vector<std::string> job_command(const Arguments& args, const config::EnvLookup& env) {
  if (!args.launcher_line.empty()) return args.launcher_line;
  const char* mpiexec = non_empty(env(config::kMpiexecVariable));
  std::vector<std::string> command = {mpiexec ? mpiexec : "mpiexec", "-n", args.ranks};
  command.insert(command.end(), args.program.begin(), args.program.end());
  return command;
}

}  // namespace mpisentry::launcher
