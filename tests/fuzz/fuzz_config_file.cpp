// The config file reader (apply_text, then check_consistency), on any text:
// every error and notice names its line ("fuzz.conf:N", or the key whose
// rule failed) and says what is wrong; the settings it accepts, written out
// as config text by value_text, read back to the same settings.
#include "config/checks.hpp"
#include "config/keys.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"
#include "fuzz.hpp"

#include <algorithm>
#include <charconv>

using namespace mpisentry;

namespace {

constexpr std::string_view source = "fuzz.conf";

// "fuzz.conf:N" with N a line of the text, or a key's name.
bool names_a_place(std::string_view where, std::size_t lines) {
  if (config::find_key(where) != nullptr) return true;
  if (!where.starts_with(source) || !where.substr(source.size()).starts_with(':')) return false;
  const std::string_view number = where.substr(source.size() + 1);
  std::size_t line = 0;
  const auto [end, status] = std::from_chars(number.data(), number.data() + number.size(), line);
  return status == std::errc{} && end == number.data() + number.size() && line >= 1 && line <= lines;
}

// Paths are written as they are, quoted when they hold blanks; a path with a
// quote or a line break (which only the environment can give) has no config
// text.
bool writable(const config::Settings& settings) {
  for (const config::Key& key : config::keys()) {
    const auto* path = std::get_if<std::string config::Settings::*>(&key.member);
    if (path && (settings.**path).find_first_of("\"\n") != std::string::npos) return false;
  }
  return true;
}

// Every key, and the checks switched from their defaults (matching every
// check's name against every check is what makes reading slow).
std::string listing(const config::Settings& settings) {
  const config::Settings defaults;
  std::string text;
  for (const config::Key& key : config::keys())
    text += std::string(key.name) + ' ' + config::value_text(key, settings) + '\n';
  for (const config::CheckInfo& check : config::switchable_checks()) {
    if (settings.*check.member != defaults.*check.member)
      text += std::string(config::check_key) + ' ' + std::string(check.name) + (settings.*check.member ? " ON\n" : " OFF\n");
  }
  return text;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::text_of(data, size);
  config::LoadResult result;
  config::apply_text(text, source, result);
  config::check_consistency(result);
  const std::size_t lines = static_cast<std::size_t>(std::ranges::count(text, '\n')) + 1;
  for (const auto* problems : {&result.errors, &result.notices}) {
    for (const config::Problem& problem : *problems) {
      fuzz::require(names_a_place(problem.where, lines), "a problem names its line or key", problem.str());
      fuzz::require(!problem.message.empty(), "a problem says what is wrong", problem.str());
    }
  }
  if (!writable(result.settings)) return 0;
  const std::string written = listing(result.settings);
  config::LoadResult again;
  config::apply_text(written, source, again);
  std::string errors;
  for (const config::Problem& error : again.errors) errors += error.str() + '\n';
  fuzz::require(again.errors.empty() && again.settings == result.settings,
                "the settings written as config text read back the same", written + errors);
  return 0;
}
