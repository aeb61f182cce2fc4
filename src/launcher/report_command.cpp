#include "launcher/report_command.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "config/exit_status.hpp"
#include "config/text.hpp"
#include "launcher/command_line.hpp"
#include "report/html.hpp"

namespace mpisentry::launcher {
namespace {

namespace fs = std::filesystem;

constexpr int kWritten = 0;

constexpr std::string_view kReportDescription =
    "Makes one self-contained page of a JSON report (REPORT-JSON) to read in a browser: the verdict and the rule "
    "that fired, the wait-for graph drawn, each class of ranks with its calls, and each stack, with its source lines "
    "where the files are readable here. Exit status 0: written; 2: the report could not be read, is not one, or the "
    "page could not be written.";

std::span<const OptionSpec> report_options() {
  static const OptionSpec table[] = {
      value_option("--output", "FILE", "the page's file name", "the page to write; default: FILE.html beside the report",
                   "-o"),
      help_option()};
  return table;
}

std::string report_usage() {
  return "usage: mpisentry report [options] FILE.json\n\n" + wrapped(kReportDescription, kHelpWidth) +
         "\noptions:\n" + options_text(help_rows(report_options()), 22);
}

}  // namespace

int run_report_command(std::span<const std::string> words) {
  const std::string where(kReportCommandName);
  const CommandLine line = parse_command_line(report_options(), words, Operands::AmongOptions, "FILE.json", where + ": ");
  std::string page_path;
  bool help = false;
  for (const GivenOption& given : line.options) {
    if (given.option->name == help_option().name) help = true;
    else page_path = given.value;  // --output
  }
  if (help) {
    std::cout << report_usage();
    return kWritten;
  }
  std::vector<std::string> problems;
  for (const config::Problem& problem : line.errors) problems.push_back(problem.str());
  if (line.operands.empty()) problems.push_back(where + ": FILE.json is required");
  else if (line.operands.size() > 1)
    problems.push_back(where + ": takes one FILE.json, and no more: " + config::in_quotes(line.operands[1]));
  if (!problems.empty()) {
    for (const std::string& problem : problems) std::cerr << problem << "; see mpisentry report --help\n";
    return config::kCommandFailedStatus;
  }
  const std::string& report_path = line.operands.front();
  if (page_path.empty()) page_path = fs::path(report_path).replace_extension(".html").string();
  std::ifstream in(report_path, std::ios::binary);
  if (!in) {
    std::cerr << "mpisentry report: cannot read " << report_path << ": " << std::strerror(errno) << '\n';
    return config::kCommandFailedStatus;
  }
  std::ostringstream json;
  json << in.rdbuf();
  std::string page;
  try {
    page = report::format_html(json.str(), report_path);
  } catch (const report::BadReport& bad) {
    std::cerr << "mpisentry report: " << report_path << ": " << bad.what() << '\n';
    return config::kCommandFailedStatus;
  }
  std::ofstream out(page_path, std::ios::binary | std::ios::trunc);
  if (!(out << page) || !out.flush()) {
    std::cerr << "mpisentry report: cannot write " << page_path << ": " << std::strerror(errno) << '\n';
    return config::kCommandFailedStatus;
  }
  std::cout << "mpisentry report: wrote " << page_path << '\n';
  return kWritten;
}

}  // namespace mpisentry::launcher
