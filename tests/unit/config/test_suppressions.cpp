// The suppressions file's parser and matcher (config/suppressions.hpp), and
// the exit-status table's one home: the man page written from it and the
// README's "Exit status" table, which must say the same.
#include "config/exit_status.hpp"
#include "config/suppressions.hpp"
#include "launcher/arguments.hpp"
#include "launcher/man_pages.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace mpisentry;
using config::Suppression;

namespace {

std::vector<Suppression> parsed(const std::string& text, std::vector<config::Problem>& errors) {
  return config::parse_suppressions(text, "known.supp", errors);
}

}  // namespace

TEST_CASE("suppressions: lines of check, field and pattern, with comments and blank lines skipped", "[suppressions]") {
  std::vector<config::Problem> errors;
  const auto lines = parsed(
      "# leaks we know of\n"
      "\n"
      "  LOCAL:COMM:NOT_FREED:fun:make_halo_comm  \n"
      "LOCAL:*:NOT_FREED:src:*/vendor/*.c\n"
      "GLOBAL:MSG:**:lib:libhypre.so*\n"
      "LOCAL:MEMORY:OVERLAP:fun:ns::Solver::step*\n",
      errors);
  CHECK(errors.empty());
  REQUIRE(lines.size() == 4);
  CHECK(lines[0].checks == "LOCAL:COMM:NOT_FREED");
  CHECK(lines[0].field == Suppression::Field::Function);
  CHECK(lines[0].pattern == "make_halo_comm");
  CHECK(lines[0].where == "known.supp:3");
  CHECK(lines[1].field == Suppression::Field::Source);
  CHECK(lines[1].pattern == "*/vendor/*.c");
  CHECK(lines[2].checks == "GLOBAL:MSG:**");
  CHECK(lines[2].field == Suppression::Field::Library);
  // The pattern keeps its own colons.
  CHECK(lines[3].pattern == "ns::Solver::step*");
}

TEST_CASE("suppressions: a bad line names the file, the line and the problem, and quotes the line",
          "[suppressions]") {
  const std::pair<std::string, std::string> cases[] = {
      {"LOCAL:COMM:NOT_FREED make_halo_comm",
       "not a suppression; write CHECK:fun:PATTERN, CHECK:src:PATTERN or CHECK:lib:PATTERN: "
       "\"LOCAL:COMM:NOT_FREED make_halo_comm\""},
      {"LOCAL:COMM:NOT_FREED:fun:", "no pattern after :fun:: \"LOCAL:COMM:NOT_FREED:fun:\""},
      {":fun:main", "no check before :fun:; write CHECK:fun:PATTERN, CHECK:src:PATTERN or CHECK:lib:PATTERN: "
                    "\":fun:main\""},
      {"LOCAL:COMM:NOT_FREEED:fun:main",
       "\"LOCAL:COMM:NOT_FREEED\" matches no check (did you mean LOCAL:COMM:NOT_FREED?): "
       "\"LOCAL:COMM:NOT_FREEED:fun:main\""},
      {"GLOBAL:DEADLOCK:HARD:fun:main", "GLOBAL:DEADLOCK:HARD cannot be suppressed"},
      {"GLOBAL:DEADLOCK:POTENTIAL:src:a.c", "GLOBAL:DEADLOCK:POTENTIAL cannot be suppressed"},
      {"GLOBAL:RANK:LOST:fun:main", "GLOBAL:RANK:LOST cannot be suppressed"},
      {"LOCAL:EXIT:*:fun:main", "LOCAL:EXIT:SIGNAL cannot be suppressed"},
  };
  for (const auto& [line, message] : cases) {
    INFO(line);
    std::vector<config::Problem> errors;
    CHECK(parsed("# first line\n" + line + "\n", errors).empty());
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].where == "known.supp:2");
    CHECK(errors[0].message.find(message) == 0);
  }
}

TEST_CASE("suppressions: a pattern that also names checks that cannot be suppressed is taken for the others",
          "[suppressions]") {
  std::vector<config::Problem> errors;
  const auto lines = parsed("GLOBAL:DEADLOCK:*:fun:poll_loop\n", errors);
  CHECK(errors.empty());
  REQUIRE(lines.size() == 1);
  CHECK(config::matches_check(lines[0], "GLOBAL:DEADLOCK:NO_PROGRESS"));
  CHECK(!config::can_be_suppressed(config::check_info(Check::DeadlockHard)));
  CHECK(config::can_be_suppressed(config::check_info(Check::NoProgress)));
  CHECK(config::can_be_suppressed(config::check_info(Check::CommNotFreed)));
}

TEST_CASE("suppressions: an unreadable file is an error naming it", "[suppressions]") {
  std::vector<config::Problem> errors;
  CHECK(config::read_suppressions("/nonexistent/known.supp", errors).empty());
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].str() == "/nonexistent/known.supp: cannot read the SUPPRESSIONS file: No such file or directory");
}

TEST_CASE("suppressions: globs match the whole text, with '*' any text and '?' one character", "[suppressions]") {
  CHECK(config::matches_glob("make_halo_comm", "make_halo_comm"));
  CHECK(!config::matches_glob("make_halo", "make_halo_comm"));
  CHECK(config::matches_glob("make_*", "make_halo_comm"));
  CHECK(config::matches_glob("*halo*", "make_halo_comm"));
  CHECK(config::matches_glob("*_comm", "make_halo_comm"));
  CHECK(!config::matches_glob("*_comm", "make_halo_comm2"));
  CHECK(config::matches_glob("m?ke*c?mm", "make_halo_comm"));
  CHECK(config::matches_glob("*", ""));
  CHECK(!config::matches_glob("?", ""));
  CHECK(config::matches_glob("a*b*c", "aXbYbZc"));
  CHECK(!config::matches_glob("a*b*c", "aXbYbZ"));
  CHECK(!config::matches_glob("Make_*", "make_halo_comm"));  // case counts, as in C
}

TEST_CASE("suppressions: a frame matches by function with or without its parameters, by a file's or library's "
          "whole path or last part",
          "[suppressions]") {
  std::vector<config::Problem> errors;
  const auto lines = parsed(
      "LOCAL:COMM:NOT_FREED:fun:ns::make_comm\n"
      "LOCAL:COMM:NOT_FREED:src:halo.c\n"
      "LOCAL:COMM:NOT_FREED:src:/src/app/*\n"
      "LOCAL:COMM:NOT_FREED:lib:libhalo.so*\n",
      errors);
  REQUIRE(lines.size() == 4);
  CHECK(config::matches_frame(lines[0], "ns::make_comm(int, char**)", "", ""));
  CHECK(config::matches_frame(lines[0], "ns::make_comm", "", ""));
  CHECK(!config::matches_frame(lines[0], "ns::make_comm_twice(int)", "", ""));
  CHECK(config::matches_frame(lines[1], "f", "/src/app/halo.c", ""));
  CHECK(!config::matches_frame(lines[1], "f", "/src/app/halo.cpp", ""));
  CHECK(config::matches_frame(lines[2], "f", "/src/app/deep/halo.cpp", ""));
  CHECK(!config::matches_frame(lines[2], "f", "", ""));  // no debug information: no file
  CHECK(config::matches_frame(lines[3], "f", "", "/usr/lib/libhalo.so.2"));
  CHECK(!config::matches_frame(lines[3], "f", "/usr/lib/libhalo.so.2", ""));  // a file is not a library
}

namespace {

// The rows of the README's table under "## Exit status": command, status, meaning.
std::vector<std::vector<std::string>> readme_exit_statuses() {
  std::ifstream readme(std::filesystem::path(__FILE__).parent_path() / "../../../README.md");
  std::vector<std::vector<std::string>> rows;
  bool in_section = false;
  for (std::string line; std::getline(readme, line);) {
    if (line.starts_with("## ")) in_section = line == "## Exit status";
    if (!in_section || !line.starts_with("| ") || line.starts_with("| command") || line.starts_with("|---")) continue;
    std::vector<std::string> cells;
    std::istringstream in(line.substr(2));
    for (std::string cell; std::getline(in, cell, '|');) {
      const auto first = cell.find_first_not_of(' '), last = cell.find_last_not_of(' ');
      if (first != std::string::npos) cells.push_back(cell.substr(first, last - first + 1));
    }
    // The README shows commands and keys as code.
    for (std::string& cell : cells)
      if (cell.size() > 1 && cell.front() == '`' && cell.back() == '`') cell = cell.substr(1, cell.size() - 2);
    rows.push_back(cells);
  }
  return rows;
}

}  // namespace

TEST_CASE("exit status: the README's table says what the table in the code says, row by row", "[exit_status]") {
  const auto rows = readme_exit_statuses();
  REQUIRE(rows.size() == std::size(config::kExitStatuses));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const config::ExitStatus& status = config::kExitStatuses[i];
    INFO("row " << i + 1 << ": " << status.command << " " << status.status);
    REQUIRE(rows[i].size() == 3);
    CHECK(rows[i][0] == status.command);
    CHECK(rows[i][1] == status.status);
    CHECK(rows[i][2] == status.meaning);
  }
}

TEST_CASE("man page: EXIT STATUS from the table, ENVIRONMENT, FILES and EXAMPLES, rendered by groff without a warning",
          "[exit_status]") {
  const std::string page = launcher::command_man_page();
  std::size_t at = 0;
  for (const std::string section : {".SH OPTIONS", ".SH EXIT STATUS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXAMPLES",
                                    ".SH SEE ALSO"}) {
    INFO(section);
    at = page.find(section + "\n", at);
    CHECK(at != std::string::npos);
  }
  CHECK(page.find(".B ERROR\\-EXITCODE\n") != std::string::npos);
  CHECK(page.find(".SS mpisentry analyze\n") != std::string::npos);
  CHECK(page.find(".B 86\n") != std::string::npos);
  const std::string path = std::filesystem::temp_directory_path() / ("mpisentry-" + std::to_string(getpid()) + ".1");
  std::ofstream(path) << page;
  const std::string errors = path + ".err";
  const int status = std::system(("groff -man -Tutf8 -ww -z " + path + " 2>" + errors).c_str());
  std::ifstream warnings(errors);
  const std::string said((std::istreambuf_iterator<char>(warnings)), std::istreambuf_iterator<char>());
  std::filesystem::remove(path);
  std::filesystem::remove(errors);
  CHECK(status == 0);
  CHECK(said.empty());
}

TEST_CASE("launcher: a switch alone is on, and takes on or off after it", "[launcher][exit_status]") {
  const auto settings_of = [](std::vector<std::string> words) {
    const launcher::Arguments args = launcher::parse_arguments(words);
    INFO(args.errors.size());
    REQUIRE(args.errors.empty());
    REQUIRE(args.settings.size() == 1);
    CHECK(args.settings[0].key == "WARNINGS-ARE-ERRORS");
    return args.settings[0].value;
  };
  CHECK(settings_of({"--warnings-are-errors", "-n", "2", "./app"}) == "on");
  CHECK(settings_of({"--warnings-are-errors", "off", "-n", "2", "./app"}) == "off");
  CHECK(settings_of({"--warnings-are-errors=no", "-n", "2", "./app"}) == "no");
  CHECK(settings_of({"--warnings-are-errors", "--", "mpiexec", "-n", "2", "./app"}) == "on");
}
