#include "config/loading.hpp"

#include "config/checks.hpp"
#include "config/keys.hpp"
#include "config/text.hpp"

#include <algorithm>
#include <filesystem>

#include <unistd.h>

namespace mpisentry::config {
namespace {

constexpr std::string_view line_whitespace = " \t\r\f\v";

void add_error(LoadResult& into, std::string_view where, std::string message) {
  into.errors.push_back({std::string(where), std::move(message)});
}

// "CHECK <pattern> [ON|OFF]" without the CHECK; the pattern alone means ON, as
// a boolean key alone does in ITC files.
void apply_check(std::span<const std::string_view> words, std::string_view where, LoadResult& into) {
  if (words.empty() || words.size() > 2) {
    add_error(into, where, "CHECK takes a pattern and ON or OFF, e.g. CHECK GLOBAL:DEADLOCK:POTENTIAL ON");
    return;
  }
  const std::string_view pattern = words[0];
  bool on = true;
  if (words.size() == 2 && !parse_switch(words[1], on)) {
    add_error(into, where, "CHECK " + std::string(pattern) + ": " + in_quotes(words[1]) +
                               " is not ON or OFF (use on, true, yes, 1 or off, false, no, 0)");
    return;
  }
  // ITC's checks, and mpisentry's own (GLOBAL:DEADLOCK:UNSAFE, OUTSIDE_MPI).
  std::vector<std::string_view> known(itc_checks().begin(), itc_checks().end());
  for (const CheckInfo& check : switchable_checks())
    if (!check.itc) known.push_back(check.name);
  bool matches_any = false;
  for (const std::string_view check : known) matches_any = matches_any || matches_check_pattern(pattern, check);
  if (!matches_any) {
    std::string message = "CHECK " + in_quotes(pattern) + " matches no check";
    // A pattern with stars is no typo of one name.
    const bool has_stars = pattern.find('*') != std::string_view::npos;
    if (const auto guess = has_stars ? std::string_view{} : nearest(pattern, known); !guess.empty())
      message += " (did you mean " + std::string(guess) + "?)";
    add_error(into, where, std::move(message));
    return;
  }
  bool matches_implemented = false;
  for (const CheckInfo& check : switchable_checks()) {
    if (!matches_check_pattern(pattern, check.name)) continue;
    matches_implemented = true;
    into.settings.*check.member = on;
    into.origin[std::string(check.name)] = where;
  }
  if (!matches_implemented)
    into.notices.push_back({std::string(where), "CHECK " + std::string(pattern) + " is accepted but not implemented by mpisentry"});
}

void report_unknown_key(std::string_view key, std::string_view where, LoadResult& into) {
  std::vector<std::string_view> known{check_key};
  for (const Key& k : keys()) known.push_back(k.name);
  known.insert(known.end(), itc_only_keys().begin(), itc_only_keys().end());
  std::string message = "unknown key " + in_quotes(key);
  if (const auto guess = nearest(key, known); !guess.empty()) message += " (did you mean " + std::string(guess) + "?)";
  add_error(into, where, std::move(message));
}

// The words of one config line: whitespace separates them, double quotes keep
// spaces inside one, and an unquoted '#' starts a comment.
bool split_line(std::string_view line, std::vector<std::string_view>& words, std::string& error) {
  std::size_t at = 0;
  while ((at = line.find_first_not_of(line_whitespace, at)) != std::string_view::npos && line[at] != '#') {
    if (line[at] != '"') {
      const auto end = line.find_first_of(line_whitespace, at);
      words.push_back(line.substr(at, end - at));
      at = end;
      continue;
    }
    const auto close = line.find('"', at + 1);
    if (close == std::string_view::npos) {
      error = "missing closing quote";
      return false;
    }
    words.push_back(line.substr(at + 1, close - at - 1));
    at = close + 1;
    if (at < line.size() && line_whitespace.find(line[at]) == std::string_view::npos) {
      error = "text right after a closing quote; separate it with a space";
      return false;
    }
  }
  return true;
}

void apply_line(std::span<const std::string_view> words, std::string_view where, LoadResult& into) {
  const std::string_view key = words[0];
  const auto values = words.subspan(1);
  std::string value;
  for (const auto word : values) value += (value.empty() ? "" : " ") + std::string(word);
  if (find_key(key) != nullptr && values.size() != 1) {
    add_error(into, where,
              to_upper(key) + (values.empty() ? " needs a value"
                                              : " takes one value, got " + std::to_string(values.size()) + ": " +
                                                    config::in_quotes(value) + "; quote a value that contains spaces"));
    return;
  }
  apply_setting(key, value, where, into);
}

std::string describe(const LoadResult& result, std::string_view name, const std::string& value) {
  const auto origin = result.origin.find(name);
  return std::string(name) + ' ' + value + " (" + (origin == result.origin.end() ? "default" : origin->second) + ')';
}

}  // namespace

void apply_setting(std::string_view key, std::string_view value, std::string_view where, LoadResult& into) {
  if (equals_ignoring_case(key, check_key)) {
    const auto checks = split(value, ";,");
    if (checks.empty()) apply_check({}, where, into);
    for (const auto check : checks) apply_check(split(check, line_whitespace), where, into);
  } else if (const Key* known = find_key(key)) {
    // Paths are taken as written; other values may carry stray blanks.
    const bool is_path = std::holds_alternative<std::string Settings::*>(known->member);
    std::string error;
    if (parse_value(*known, is_path ? value : trim(value), into.settings, error))
      into.origin[std::string(known->name)] = where;
    else
      add_error(into, where, std::string(known->name) + ' ' + error);
  } else if (is_itc_only_key(key)) {
    into.notices.push_back({std::string(where), to_upper(key) + " is an ITC setting that mpisentry accepts but does not implement"});
  } else {
    report_unknown_key(key, where, into);
  }
}

void apply_text(std::string_view text, std::string_view source_name, LoadResult& into) {
  int line_number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string where = std::string(source_name) + ':' + std::to_string(++line_number);
    std::vector<std::string_view> words;
    std::string error;
    if (!split_line(text.substr(start, end - start), words, error))
      add_error(into, where, error);
    else if (!words.empty())
      apply_line(words, where, into);
    start = end + 1;
  }
}

void apply_file(std::string_view path, LoadResult& into) {
  std::string text;
  if (const std::string problem = read_text_file(std::string(path), text); !problem.empty()) {
    add_error(into, path, "cannot read config file: " + problem);
    return;
  }
  apply_text(text, path, into);
}

void apply_environment(const EnvLookup& env, LoadResult& into) {
  const auto lookup = [&](const std::string& name) { return non_empty(env(name.c_str())); };
  if (const char* file = lookup(kConfigVariable)) {
    apply_file(file, into);
  } else if (const char* itc_file = lookup("VT_CONFIG")) {
    apply_file(itc_file, into);
  }
  for (const std::string_view prefix : {"VT_", "MPISENTRY_"}) {
    for (const Key& key : keys()) {
      const std::string name = env_name(prefix, key.name);
      if (const char* value = lookup(name)) apply_setting(key.name, value, name, into);
    }
    const std::string name = env_name(prefix, check_key);
    if (const char* value = lookup(name)) apply_setting(check_key, value, name, into);
  }
}

void name_unknown_variables(std::span<const std::string> names, LoadResult& into) {
  constexpr std::string_view prefix = "MPISENTRY_";
  std::vector<std::string> read{kConfigVariable,  kNoticesShownVariable, kLaunchDirectoryVariable,
                                kLibraryVariable, kMpiexecVariable,      env_name(prefix, check_key)};
  for (const Key& key : keys()) read.push_back(env_name(prefix, key.name));
  const std::vector<std::string_view> known(read.begin(), read.end());
  for (const std::string& name : names) {
    if (!name.starts_with(prefix) || std::ranges::find(known, name) != known.end()) continue;
    std::string message = "unknown variable, ignored";
    if (const auto guess = nearest(name, known); !guess.empty()) message += " (did you mean " + std::string(guess) + "?)";
    into.notices.push_back({name, std::move(message)});
  }
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view variable = *entry;
    names.emplace_back(variable.substr(0, variable.find('=')));
  }
  return names;
}

void check_consistency(LoadResult& into) {
  const Settings& settings = into.settings;
  const std::string_view interval = name_of(&Settings::check_interval);
  const std::string_view timeout = name_of(&Settings::deadlock_timeout);
  const auto where = [&](std::string_view name) {
    const auto origin = into.origin.find(name);
    return origin == into.origin.end() ? std::string(name) : origin->second;
  };
  if (settings.check_interval <= Duration::zero()) {
    add_error(into, where(interval), std::string(interval) + " must be more than 0");
  } else if (settings.check_interval >= any_verdict_after(settings.deadlock_timeout)) {
    // Named where the interval was set, or else where the timeout was.
    const bool interval_set = into.origin.contains(interval);
    add_error(into, where(interval_set ? interval : timeout),
              describe(into, interval, format_duration(settings.check_interval)) + " must be shorter than " +
                  describe(into, timeout, format_timeout(settings.deadlock_timeout)) +
                  (settings.deadlock_timeout.automatic ? ", which waits " + format_duration(kAutoTimeout) +
                                                             " for what it cannot prove"
                                                       : std::string()));
  }
  // The stack signal is taken from threads the dump signal must not reach.
  if (settings.dump_signal != kUnsetSignal && settings.dump_signal == settings.stack_signal) {
    const std::string_view dump = name_of(&Settings::dump_signal);
    add_error(into, where(dump),
              std::string(dump) + " and " + std::string(name_of(&Settings::stack_signal)) + " are both " +
                  format_signal(settings.dump_signal, "off") + ": they must differ");
  }
  // Both may be set (a replay that records its own run), but not to one
  // directory: the recording would overwrite what the replay reads.
  if (!settings.record_dir.empty() &&
      (std::filesystem::path(settings.record_dir) / "").lexically_normal() ==
          (std::filesystem::path(settings.replay_dir) / "").lexically_normal()) {
    const std::string_view record = name_of(&Settings::record_dir);
    const std::string_view replay = name_of(&Settings::replay_dir);
    add_error(into, where(replay),
              std::string(record) + " (" + where(record) + ") and " + std::string(replay) + " are both " +
                  config::in_quotes(settings.record_dir) + ": a replay that records its run needs another directory to write");
  }
}

LoadResult load(const EnvLookup& env) {
  LoadResult result;
  apply_environment(env, result);
  check_consistency(result);
  return result;
}

}  // namespace mpisentry::config
