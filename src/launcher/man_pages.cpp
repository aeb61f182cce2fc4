#include "launcher/man_pages.hpp"

#include "config/keys.hpp"
#include "config/text.hpp"
#include "launcher/analyze_command.hpp"
#include "launcher/arguments.hpp"

#include <sstream>

namespace mpisentry::launcher {
namespace {

// Text as troff reads it literally: backslashes escaped, hyphens as minus
// signs (what a user types), and a line that would start with a control
// character guarded.
std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string header(std::string_view name, int section, std::string_view title) {
  return ".TH " + std::string(name) + ' ' + std::to_string(section) + " \"\" \"mpisentry " MPISENTRY_VERSION "\" \"" +
         std::string(title) + "\"\n";
}

// A tagged paragraph: `tag` in bold, `text` indented below it.
std::string item(std::string_view tag, std::string_view text) {
  return ".TP\n.B " + escaped(tag) + '\n' + escaped(text) + '\n';
}

}  // namespace

std::string command_man_page() {
  std::string page = header("MPISENTRY", 1, "User Commands");
  page += ".SH NAME\nmpisentry \\- runtime deadlock and correctness checker for MPI programs\n.SH SYNOPSIS\n";
  for (const CommandForm& form : command_forms()) page += ".B " + escaped(form.command) + "\n.br\n";
  page += ".SH DESCRIPTION\n" + escaped(kDescription) + '\n';
  for (const CommandForm& form : command_forms()) page += item(form.command, form.does);
  page += ".SH OPTIONS\n";
  bool in_checks = false;
  for (const OptionHelp& option : options_help()) {
    if (option.is_check != in_checks) page += option.is_check ? ".RS\n" : ".RE\n";
    in_checks = option.is_check;
    page += item(option.option, option.help);
  }
  if (in_checks) page += ".RE\n";
  page += ".SH TIME\n" + escaped(kTimeSyntax) + "\n.SH ENVIRONMENT\n" + escaped(kEnvironmentHelp) + '\n';
  page += ".SH ANALYZE\n.B mpisentry analyze [options] DIR\n.PP\n" + escaped(kAnalyzeDescription) + '\n';
  for (const AnalyzeOption& option : kAnalyzeOptions) page += item(option.option, option.help);
  page += ".SS Exit status of mpisentry analyze\n";
  for (const AnalyzeExitStatus& status : kAnalyzeExitStatuses) page += item(status.status, status.meaning);
  page += ".SH SEE ALSO\n.BR mpisentry.conf (5)\n";
  return page;
}

std::string config_man_page(std::string_view config_file) {
  std::string page = header("MPISENTRY.CONF", 5, "File Formats");
  page += ".SH NAME\nmpisentry.conf \\- settings of the mpisentry MPI checker\n.SH DESCRIPTION\n";
  // The leading comment block, a blank comment line between paragraphs.
  std::istringstream lines{std::string(config_file)};
  for (std::string line; std::getline(lines, line) && line.starts_with('#');) {
    const std::string_view text = config::trim(std::string_view(line).substr(1));
    page += text.empty() ? ".PP\n" : escaped(text) + '\n';
  }
  const config::Settings defaults;
  page += ".SH KEYS\n";
  for (const config::Key& key : config::keys())
    page += item(std::string(key.name) + ' ' + config::value_syntax(key),
                 std::string(key.help) + ". Default: " + config::value_text(key, defaults) + "; environment: " +
                     config::env_name("MPISENTRY_", key.name) + " or " + config::env_name("VT_", key.name) +
                     "; option: " + config::option_name(key.name) + '.');
  page += ".SH CHECKS\n" + escaped(std::string(config::check_key) + " PATTERN ON|OFF: " + std::string(kCheckPatternHelp)) +
          ".\n";
  for (const config::CheckInfo& check : config::switchable_checks())
    page += item(check.name, std::string(check.help) + (defaults.*check.member ? " (default ON)" : " (default OFF)"));
  page += ".SH SEE ALSO\n.BR mpisentry (1)\n";
  return page;
}

}  // namespace mpisentry::launcher
