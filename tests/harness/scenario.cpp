#include "scenario.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "report_text.hpp"

namespace harness {

std::vector<std::string> checker_prefix(const Workspace& workspace, const std::vector<std::string>& options) {
  std::vector<std::string> command{MPISENTRY_LAUNCHER};
  command.insert(command.end(), options.begin(), options.end());
  command.insert(command.end(),
                 {"--report-file", workspace.report_path().string(), "--report-json", workspace.json_path().string()});
  return command;
}

std::vector<std::string> checked_command(const Workspace& workspace, int ranks, const Program& program,
                                         const std::vector<std::string>& options,
                                         const std::vector<std::string>& args) {
  std::vector<std::string> command = checker_prefix(workspace, options);
  command.insert(command.end(), {"-n", std::to_string(ranks), program.executable});
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

JobResult run_checked(const Workspace& workspace, int ranks, const Program& program,
                      const std::vector<std::string>& options, const std::vector<std::string>& args) {
  return run_job(workspace, checked_command(workspace, ranks, program, options, args));
}

std::vector<std::string> plain_command(int ranks, const Program& program, const std::vector<std::string>& args) {
  std::vector<std::string> command{MPIEXEC, "-n", std::to_string(ranks), program.executable};
  command.insert(command.end(), args.begin(), args.end());
  return command;
}

Environment preload_environment(const Workspace& workspace) {
  return {{"LD_PRELOAD", MPISENTRY_LIBRARY},
          {"MPISENTRY_DEADLOCK_TIMEOUT", kDeadlockTimeout},
          {"MPISENTRY_REPORT_FILE", workspace.report_path().string()},
          {"MPISENTRY_REPORT_JSON", workspace.json_path().string()}};
}

bool mpi_has(const std::string& functions) {
  if (!kMpi4) WARN("this MPI lacks MPI 4.0's " << functions << ": not tried");
  return kMpi4;
}

Environment open_mpi_settings() {
  std::ifstream file(OPEN_MPI_SETTINGS);
  REQUIRE(file);
  Environment settings;
  for (std::string line; std::getline(file, line);) {
    const auto equals = line.find('=');
    if (line.empty() || line[0] == '#' || equals == std::string::npos) continue;
    settings.emplace_back(line.substr(0, equals), line.substr(equals + 1));
  }
  return settings;
}

std::string cycle_line(const std::string& report) {
  const std::size_t start = report.find("deadlock: rank ");
  if (start == std::string::npos) return "";
  return report.substr(start, report.find('\n', start) - start);
}

void check_cycle(const JobResult& result, const std::vector<int>& ranks) {
  const std::string line = cycle_line(result.report.value_or(""));
  INFO("cycle line: " << line);
  std::vector<std::string> rotations;
  for (std::size_t first = 0; first < ranks.size(); ++first) {
    std::string path;
    for (std::size_t i = 0; i <= ranks.size(); ++i)
      path += (i == 0 ? "rank " : " -> rank ") + std::to_string(ranks[(first + i) % ranks.size()]);
    rotations.push_back(regex_escape(path) + " \\(");
  }
  std::string pattern = "deadlock: (";
  for (std::size_t i = 0; i < rotations.size(); ++i) pattern += (i == 0 ? "" : "|") + rotations[i];
  CHECK(any_line_matches(line, pattern + ")"));
  for (int rank = 0; rank < 8; ++rank) {
    if (std::find(ranks.begin(), ranks.end(), rank) != ranks.end()) continue;
    INFO("rank " << rank << " is not in the cycle");
    CHECK_FALSE(any_line_matches(line, "rank " + std::to_string(rank) + "\\b"));
  }
}

void check_deadlock(const JobResult& result, const Program& program, const ExpectedDeadlock& expected) {
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.failed());
  CHECK(result.elapsed_seconds < kDeadlockJobSeconds);

  const std::string verdict = "[0] ERROR: " + expected.check + ": fatal error";
  CHECK(result.err.find(verdict) != std::string::npos);
  REQUIRE(result.report.has_value());
  const std::string& report = *result.report;
  CHECK(report.find(verdict) != std::string::npos);

  const BlockedCalls blocked = parse_blocked_calls(report);
  for (const auto& [rank, call_pattern] : expected.calls) {
    const auto found = blocked.call_of.find(rank);
    const std::string call = found == blocked.call_of.end() ? "(none listed)" : found->second;
    INFO("rank " << rank << "'s call " << call << " should match " << call_pattern);
    CHECK(any_line_matches(call, call_pattern));
  }

  const std::vector<int> lines = marker_lines(program.source, expected.shape);
  REQUIRE(lines.size() == expected.blocking_functions.size());
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string frame = frame_pattern(expected.blocking_functions[i], program.source, lines[i]);
    INFO("expected a stack frame matching " << frame);
    CHECK(any_line_matches(report, frame));
  }
  if (!expected.cycle.empty()) check_cycle(result, expected.cycle);
  INFO("the report should give the rule: " << expected.rule);
  CHECK(report.find(expected.rule) != std::string::npos);
}

ProgramExpectation expectation_of(const Program& program) {
  static const std::string kExpect = "mpisentry-expect: ";
  static const std::regex ranks_and_check(R"((\d+) ranks, (\S+))"), rank_call(R"(rank (\d+) (.+))"),
      blocks_in(R"(blocks in (.+))"), cycle(R"(cycle ((\d+ ?)+))"), args(R"(args (.+))"), rule(R"(rule (.+))");
  std::ifstream in(program.source);
  if (!in) throw std::runtime_error("cannot read test program source " + program.source);
  ProgramExpectation expectation;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const auto at = line.find(kExpect);
    if (at == std::string::npos) continue;
    std::string text = line.substr(at + kExpect.size());
    text.erase(text.find_last_not_of(" \t") + 1);  // trailing blanks
    std::smatch match;
    if (std::regex_match(text, match, ranks_and_check)) {
      expectation.ranks = std::stoi(match[1]);
      expectation.deadlock.check = match[2];
    } else if (std::regex_match(text, match, rank_call)) {
      expectation.deadlock.calls[std::stoi(match[1])] = match[2];
    } else if (std::regex_match(text, match, cycle)) {
      std::istringstream ranks(match[1]);
      for (int rank = 0; ranks >> rank;) expectation.deadlock.cycle.push_back(rank);
    } else if (std::regex_match(text, match, args)) {
      std::istringstream words(match[1]);
      for (std::string word; words >> word;) expectation.args.push_back(word);
    } else if (std::regex_match(text, match, rule)) {
      expectation.deadlock.rule = match[1];
    } else if (std::regex_match(text, match, blocks_in)) {
      std::istringstream functions(match[1]);
      for (std::string function; functions >> function;)
        expectation.deadlock.blocking_functions.push_back(function == "*" ? "" : function);
    } else {
      throw std::runtime_error(program.source + ":" + std::to_string(number) + ": cannot read \"" + text +
                               "\"; expected \"N ranks, CHECK\", \"rank R REGEX\", \"blocks in FUNCTION...\", \"cycle R...\", \"rule TEXT\" or \"args WORD...\"");
    }
  }
  if (expectation.ranks == 0)
    throw std::runtime_error(program.source + ": no line \"" + kExpect + "N ranks, CHECK\"");
  return expectation;
}

JobResult check_expected_deadlock(const Program& program, const std::vector<std::string>& options) {
  const ProgramExpectation expected = expectation_of(program);
  Workspace workspace;
  JobResult result = run_checked(workspace, expected.ranks, program, options, expected.args);
  check_deadlock(result, program, expected.deadlock);
  return result;
}

void check_clean_run(const JobResult& result, const Workspace& workspace, int exit_status) {
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.signal == 0);
  CHECK(result.exit_status == exit_status);
  // No report line of any check, and no error of the checker's own.
  CHECK(result.err.find("] ERROR:") == std::string::npos);
  CHECK(result.err.find("] WARNING:") == std::string::npos);
  CHECK(result.err.find("] error:") == std::string::npos);
  for (const auto& entry : std::filesystem::directory_iterator(workspace.dir())) {
    INFO("written by the job: " << entry.path());
    CHECK((entry.path() == workspace.stdout_path() || entry.path() == workspace.stderr_path()));
  }
}

int marked_line(const Program& program, const std::string& mark) {
  const std::vector<int> lines = marked_lines(program.source, mark);
  REQUIRE(lines.size() == 1);
  return lines.front();
}

JobResult check_unchanged_by_checker(const Workspace& workspace, int ranks, const Program& program,
                                     const std::vector<std::string>& options, const std::vector<std::string>& args) {
  const JobResult plain = run_job(workspace, plain_command(ranks, program, args));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE_FALSE(plain.timed_out);
  const JobResult checked = run_checked(workspace, ranks, program, options, args);
  check_clean_run(checked, workspace, plain.exit_status);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
  return plain;
}

void check_ending_possible_without_checker(const Workspace& workspace, const std::vector<std::string>& plain,
                                           const JobResult& checked) {
  constexpr int kTries = 8;
  INFO(describe(checked));
  REQUIRE_FALSE(checked.timed_out);
  std::string seen;
  for (int run = 0; run < kTries; ++run) {
    const JobResult unchecked = run_job(workspace, plain);
    INFO("without the checker:\n" << describe(unchecked));
    REQUIRE_FALSE(unchecked.timed_out);
    if (unchecked.exit_status == checked.exit_status && unchecked.signal == checked.signal) return;
    seen += " (status " + std::to_string(unchecked.exit_status) + ", signal " + std::to_string(unchecked.signal) + ")";
  }
  FAIL("the checked job ended with status " << checked.exit_status << ", signal " << checked.signal << "; without the checker"
                                             << seen);
}

std::vector<std::string> with(std::vector<std::string> options, const std::vector<std::string>& more) {
  options.insert(options.end(), more.begin(), more.end());
  return options;
}

void check_reported(const JobResult& result, const std::vector<std::string>& patterns) {
  INFO(describe(result));
  REQUIRE(result.report.has_value());
  for (const std::string& pattern : patterns) {
    INFO("pattern: " << pattern);
    CHECK(any_line_matches(result.err, pattern));
    CHECK(any_line_matches(*result.report, pattern));
  }
}

}  // namespace harness
