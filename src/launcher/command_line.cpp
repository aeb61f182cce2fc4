#include "launcher/command_line.hpp"

#include "config/settings.hpp"
#include "config/text.hpp"

#include <algorithm>

namespace mpisentry::launcher {
namespace {

using config::Problem;

// Digits, with a '-' before them or not: a number as written, which the
// config's range then checks.
bool is_whole_number(std::string_view text) {
  if (text.starts_with('-')) text.remove_prefix(1);
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

const OptionSpec* find_option(std::span<const OptionSpec> table, std::string_view written) {
  const auto found = std::ranges::find_if(
      table, [&](const OptionSpec& option) { return option.name == written || (!option.alias.empty() && option.alias == written); });
  return found == table.end() ? nullptr : &*found;
}

std::string unknown_option(std::span<const OptionSpec> table, std::string_view written) {
  std::vector<std::string_view> names;
  for (const OptionSpec& option : table) names.push_back(option.name);
  std::string message = "unknown option";
  if (const auto guess = config::nearest(written, names); !guess.empty())
    message += " (did you mean " + std::string(guess) + "?)";
  return message;
}

// Whether the word after an option whose value may be left out is its value.
bool takes_next(const OptionSpec& option, std::string_view next) {
  bool on = true;
  switch (option.value) {
    case ValueRule::Required: return true;
    case ValueRule::Switch: return config::parse_switch(next, on);
    case ValueRule::Number: return is_whole_number(next);
    case ValueRule::None: break;
  }
  return false;
}

// A value left out: a switch alone is on, a number its default.
std::string value_when_none_follows(const OptionSpec& option) {
  return option.value == ValueRule::Switch ? "on" : option.absent;
}

}  // namespace

OptionSpec flag_option(std::string name, std::string help) {
  OptionSpec option;
  option.name = std::move(name);
  option.help = std::move(help);
  return option;
}

OptionSpec value_option(std::string name, std::string value_name, std::string needs, std::string help,
                        std::string alias) {
  OptionSpec option;
  option.name = std::move(name);
  option.alias = std::move(alias);
  option.value = ValueRule::Required;
  option.value_name = std::move(value_name);
  option.needs = std::move(needs);
  option.help = std::move(help);
  return option;
}

const OptionSpec& help_option() {
  static const OptionSpec help = [] {
    OptionSpec option = flag_option("--help", "show this text");
    option.alias = "-h";
    return option;
  }();
  return help;
}

OptionSpec setting_option(const config::Key& key) {
  const config::Settings defaults;
  OptionSpec option;
  option.name = config::option_name(key.name);
  option.value = std::holds_alternative<bool config::Settings::*>(key.member) ? ValueRule::Switch : ValueRule::Required;
  option.value_name = config::value_syntax(key);
  option.setting = key.name;
  option.help = std::string(key.help) + " (" + std::string(key.name) + ", default " + config::value_text(key, defaults) + ')';
  return option;
}

CommandLine parse_command_line(std::span<const OptionSpec> table, std::span<const std::string> words,
                               Operands operands, std::string_view what, std::string_view where) {
  CommandLine line;
  const auto problem = [&](std::string word, std::string message) {
    line.errors.push_back({std::string(where) + word, std::move(message)});
  };
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--") {
      line.double_dash = true;
      line.operands.insert(line.operands.end(), words.begin() + i + 1, words.end());
      break;
    }
    if (word.empty()) {
      // Mostly an unset variable ("$APP"); a message about "" would name nothing.
      problem("argument " + std::to_string(i + 1), "is empty where an option or " + std::string(what) + " should be");
      break;
    }
    if (!word.starts_with('-') || word == "-") {
      if (operands == Operands::EndOptions) {
        line.operands.assign(words.begin() + i, words.end());
        break;
      }
      line.operands.push_back(word);
      continue;
    }
    // "--option value" or "--option=value"
    const auto equals = word.find('=');
    const std::string written = word.substr(0, equals);
    const OptionSpec* option = find_option(table, written);
    if (!option) {
      problem(written, unknown_option(table, written));
      continue;
    }
    GivenOption given{option, written, {}};
    if (equals != std::string::npos) {
      if (option->value == ValueRule::None) {
        problem(written, "takes no value");
        continue;
      }
      given.value = word.substr(equals + 1);
    } else if (option->value != ValueRule::None) {
      if (i + 1 < words.size() && takes_next(*option, words[i + 1])) {
        given.value = words[++i];
      } else if (option->value == ValueRule::Required) {
        problem(written, "needs " + option->needs);
        continue;
      } else {
        given.value = value_when_none_follows(*option);
      }
    }
    line.options.push_back(std::move(given));
  }
  return line;
}

std::vector<OptionHelp> help_rows(std::span<const OptionSpec> table) {
  std::vector<OptionHelp> rows;
  for (const OptionSpec& option : table) {
    if (option.help.empty()) continue;
    std::string names = option.name;
    if (!option.alias.empty()) names = option.alias + ", " + names;
    rows.push_back({option.value_name.empty() ? names : names + ' ' + option.value_name, option.help});
  }
  return rows;
}

std::string options_text(std::span<const OptionHelp> rows, std::size_t column) {
  std::string text;
  for (const OptionHelp& row : rows) text += wrapped(row.help, kHelpWidth, (row.is_check ? "    " : "  ") + row.option, column);
  return text;
}

std::string wrapped(std::string_view text, std::size_t width, std::string first, std::size_t column) {
  std::string out, line = std::move(first);
  for (const auto word : config::split(text, " ")) {
    if (line.empty() || line.size() < column) {
      line.resize(column, ' ');
      line += word;
    } else if (line.size() + 1 + word.size() > width) {
      out += line + '\n';
      line = std::string(column, ' ') + std::string(word);
    } else {
      line += ' ' + std::string(word);
    }
  }
  return out + line + '\n';
}

}  // namespace mpisentry::launcher
