// The one parser of every form of the mpisentry command (the job's line and
// the dump, analyze and report subcommands), each over a table of its options;
// an option that is a setting comes from flags.def (setting_option).
//
// Not CLI11: the job's options take their values as the next word only where
// that word is one ("--stack off" but "--stack ./app", "--explore [N]"), which
// a parser that decides from the option alone cannot express.
#pragma once

#include "config/keys.hpp"
#include "config/loading.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::launcher {

// How an option takes its value: always "--name=VALUE" or, as below, from
// the word that follows.
enum class ValueRule {
  None,      // --help
  Required,  // the next word, whatever it is
  Switch,    // the next word when it is on/off (config::parse_switch), else "on"
  Number,    // the next word when it is a whole number (-1 too), else `absent`
};

struct OptionSpec {
  std::string name;              // "--runs-dir"
  std::string alias;             // "-h", "-np"; empty for none
  ValueRule value = ValueRule::None;
  std::string value_name;        // "DIR", in the help
  std::string needs = "a value"; // what the message says is missing: "-n: needs a number of ranks"
  std::string absent;            // a Number's value when none follows
  std::string setting;           // the config key it sets ("DEADLOCK-TIMEOUT"); empty for none
  std::string help;              // empty: not listed
};

// An option without a value.
OptionSpec flag_option(std::string name, std::string help);
// An option whose value is the next word: --json FILE; `needs` as above.
OptionSpec value_option(std::string name, std::string value_name, std::string needs, std::string help,
                        std::string alias = {});
// --help, -h: every command's.
const OptionSpec& help_option();

// `key` as an option of its own: --deadlock-timeout TIME, its help from
// flags.def with the key's name and default.
OptionSpec setting_option(const config::Key& key);

// Where the operands (the words that are not options) may stand.
enum class Operands {
  EndOptions,    // the first one ends the options, and every word after it is an operand: the job's program
  AmongOptions,  // anywhere: a subcommand's file or PID
};

struct GivenOption {
  const OptionSpec* option;
  std::string written;  // as written, for messages: "-np", "--deadlock-timeout"
  std::string value;
};

struct CommandLine {
  std::vector<GivenOption> options;  // in command-line order
  std::vector<std::string> operands;
  bool double_dash = false;          // "--" was given: the operands are the words after it
  std::vector<config::Problem> errors;  // each names the word it is about
};

// `what` names the operands in a message about an empty word: "the program".
// `where` goes before each message's word ("mpisentry dump: "), empty for the job's.
CommandLine parse_command_line(std::span<const OptionSpec> table, std::span<const std::string> words,
                               Operands operands, std::string_view what, std::string_view where = "");

// An option and what it does, as --help and the man page list them.
struct OptionHelp {
  std::string option;  // "--deadlock-timeout TIME"
  std::string help;
  bool is_check = false;  // a check's name, listed under --check
};
std::vector<OptionHelp> help_rows(std::span<const OptionSpec> table);

// The rows as --help shows them: each option, its help from `column` on.
std::string options_text(std::span<const OptionHelp> rows, std::size_t column);

// `first`, then `text` as lines of at most `width` characters (a longer word
// stands alone), each line's text from `column` on: a hanging indent.
std::string wrapped(std::string_view text, std::size_t width, std::string first = "", std::size_t column = 0);

inline constexpr std::size_t kHelpWidth = 80;

}  // namespace mpisentry::launcher
