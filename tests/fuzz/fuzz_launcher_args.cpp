// The mpisentry command line (parse_arguments, the settings resolve_settings
// makes of it, and `mpisentry dump`'s parse_dump_arguments): every error
// names the option or word it is about and says what is wrong; a command
// line without errors says what to run.
//
// Input: the words, each ended by '\0'.
#include "launcher/arguments.hpp"
#include "launcher/dump.hpp"
#include "launcher/job.hpp"
#include "fuzz.hpp"

#include <charconv>

using namespace mpisentry;

namespace {

void require_clear(const std::vector<config::Problem>& problems) {
  for (const config::Problem& problem : problems) {
    fuzz::require(!problem.where.empty(), "an error names what it is about", problem.str());
    fuzz::require(!problem.message.empty(), "an error says what is wrong", problem.str());
  }
}

bool is_positive_number(std::string_view text) {
  int value = 0;
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), value);
  return status == std::errc{} && end == text.data() + text.size() && value > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words;
  std::string_view rest = fuzz::text_of(data, size);
  while (!rest.empty()) {
    const auto end = rest.find('\0');
    words.emplace_back(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
  }

  if (!words.empty() && words.front() == launcher::kDumpCommand) {
    const launcher::DumpArguments dump = launcher::parse_dump_arguments(std::span(words).subspan(1));
    require_clear(dump.errors);
    fuzz::require(dump.help || !dump.errors.empty() || dump.pid > 0, "a dump without errors has a PID");
    return 0;
  }

  launcher::Arguments args = launcher::parse_arguments(words);
  require_clear(args.errors);
  if (args.help || args.version || !args.errors.empty()) return 0;
  const bool runs_program = !args.ranks.empty() && !args.program.empty() && args.launcher_line.empty();
  const bool runs_line = args.ranks.empty() && args.program.empty() && !args.launcher_line.empty();
  fuzz::require(runs_program != runs_line, "a command line without errors runs a program or a launcher line");
  fuzz::require(!runs_program || is_positive_number(args.ranks), "-n gives a positive number of ranks", args.ranks);
  // The settings from the options alone: a file named by --config could be
  // anything (a FIFO would block), and the config file target reads texts.
  args.config_file.clear();
  const config::LoadResult settings = launcher::resolve_settings(args, [](const char*) -> const char* { return nullptr; });
  require_clear(settings.errors);
  require_clear(settings.notices);
  return 0;
}
