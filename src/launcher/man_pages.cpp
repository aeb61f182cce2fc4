#include "launcher/man_pages.hpp"

#include "config/exit_status.hpp"
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

struct ManItem {
  std::string_view tag;
  std::string_view text;
};

constexpr std::string_view kExitStatusHelp =
    "A job's status is the program's own unless the checker ended the job or found what ERROR-EXITCODE counts. "
    "ERROR-EXITCODE wins over the program's own status, as Valgrind's --error-exitcode and LeakSanitizer's exitcode "
    "do: mpiexec (Hydra) gives the bitwise OR of the ranks' statuses, so only every rank ending with the same "
    "status gives a script that status exactly.";

constexpr ManItem kEnvironmentVariables[] = {
    {"MPISENTRY_<KEY>, VT_<KEY>", "a key of mpisentry.conf(5), dashes as underscores: MPISENTRY_DEADLOCK_TIMEOUT=10s"},
    {"MPISENTRY_CONFIG, VT_CONFIG", "the config file, when --config does not name one"},
};

constexpr ManItem kFiles[] = {
    {"mpisentry_PROGRAM_ID.txt",
     "the report, in the directory mpisentry started in, unless REPORT-FILE names another; ID is the batch job's "
     "id, else the time and rank 0's process id"},
    {"PREFIX/share/mpisentry/mpisentry.conf", "every key with its default, a config file to start from"},
    {"SUPPRESSIONS", "the suppressions file, when the key names one: lines CHECK:fun:PATTERN, CHECK:src:PATTERN, "
                     "CHECK:lib:PATTERN, and # comments"},
    {"PREFIX/lib/libmpisentry.so", "the checker, preloaded into every rank"},
};

constexpr ManItem kExamples[] = {
    {"mpisentry -n 4 ./app", "runs mpiexec -n 4 ./app with the checker in every rank"},
    {"mpisentry --deadlock-timeout 10s -- srun -n 64 ./app", "any launcher line, after --"},
    {"mpisentry --check-all --error-exitcode 42 -n 4 ./app",
     "a test run: every consistency check, and status 42 when any rank found an error"},
    {"mpisentry --error-exitcode 42 --warnings-are-errors --suppressions known.supp -n 4 ./app",
     "warnings count too, but not the reports that a line of known.supp matches, such as "
     "LOCAL:COMM:NOT_FREED:fun:make_halo_comm"},
    {"mpisentry --dump-signal SIGUSR1 -n 4 ./app & mpisentry dump $!",
     "every rank's call and stack in one report while the job goes on"},
};

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
  page += ".SH TIME\n" + escaped(kTimeSyntax) + '\n';
  page += ".SH ANALYZE\n.B mpisentry analyze [options] DIR\n.PP\n" + escaped(kAnalyzeDescription) + '\n';
  for (const OptionHelp& option : help_rows(analyze_options())) page += item(option.option, option.help);
  page += ".SH EXIT STATUS\n" + escaped(kExitStatusHelp) + '\n';
  std::string_view command;
  for (const config::ExitStatus& status : config::kExitStatuses) {
    if (status.command != command) page += ".SS " + escaped(status.command) + '\n';
    command = status.command;
    page += item(status.status, status.meaning);
  }
  page += ".SH ENVIRONMENT\n" + escaped(kEnvironmentHelp) + '\n';
  for (const ManItem& variable : kEnvironmentVariables) page += item(variable.tag, variable.text);
  page += ".SH FILES\n";
  for (const ManItem& file : kFiles) page += item(file.tag, file.text);
  page += ".SH EXAMPLES\n";
  for (const ManItem& example : kExamples) page += item(example.tag, example.text);
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
