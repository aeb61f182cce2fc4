#include "launcher/report_command.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "config/exit_status.hpp"
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

}  // namespace

int run_report_command(std::span<const std::string> words) {
  CLI::App app{std::string(kReportDescription), "mpisentry report"};
  std::string report_path, page_path;
  app.add_option("FILE.json", report_path, "the JSON report")->required();
  app.add_option("-o,--output", page_path, "the page to write; default: FILE.html beside the report");
  try {
    app.parse(std::vector<std::string>(words.rbegin(), words.rend()));  // CLI11 takes them last first
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return kWritten;
  } catch (const CLI::ParseError& error) {
    std::cerr << "mpisentry report: " << error.what() << "; see mpisentry report --help\n";
    return config::kCommandFailedStatus;
  }
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
