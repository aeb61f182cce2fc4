// The CI reports of real runs (REPORT-JUNIT, REPORT-SARIF): a deadlock, a
// run of --check-all with an error and a warning on each rank, a crash (a
// rank's own report), and a clean run; each pair of files checked by check_ci_reports.py, read by
// Debian's packages of the SARIF object model and of a JUnit parser, and for what they say.
#include <filesystem>

#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

namespace {

struct Expected {
  std::string rule, level, mark, ranks;  // ranks "-": any
};

// Runs the program on 2 ranks with both CI reports, then checks them.
JobResult run_and_check(const Program& program, const std::vector<std::string>& args,
                        const std::vector<std::string>& options, const std::vector<Expected>& expected) {
  Workspace workspace;
  const std::string junit = (workspace.dir() / "mpisentry.junit.xml").string();
  const std::string sarif = (workspace.dir() / "mpisentry.sarif").string();
  const std::string source = std::filesystem::path(program.source).filename().string();
  const JobResult result =
      run_checked(workspace, 2, program, with(options, {"--report-junit", junit, "--report-sarif", sarif}), args);
  INFO(describe(result));
  std::vector<std::string> check = {"/usr/bin/python3", CHECK_CI_REPORTS_SCRIPT, "--junit", junit, "--sarif", sarif};
  for (const Expected& each : expected)
    check.insert(check.end(), {"--expect", each.rule, each.level,
                               source + ':' + std::to_string(marked_line(program, each.mark)), each.ranks});
  const JobResult checked = run_job(workspace, check);
  INFO(describe(checked));
  CHECK(checked.succeeded());
  return result;
}

}  // namespace

TEST_CASE("ci reports: a deadlock is a JUnit failure and a SARIF error at both ranks' blocked line",
          "[ci_reports]") {
  const JobResult result =
      run_and_check(TEST_PROGRAM(ci_reports), {"deadlock"}, kDeadlockOptions, {{"GLOBAL:DEADLOCK:HARD", "error", "deadlock", "0-1"}});
  CHECK(result.failed());
}

TEST_CASE("ci reports: --check-all's error and every rank's warning, each at the program's line", "[ci_reports]") {
  const JobResult result = run_and_check(TEST_PROGRAM(ci_reports), {"findings"}, {"--check-all", "--check-max-errors", "0"},
                                         {{"GLOBAL:COLLECTIVE:ROOT_MISMATCH", "error", "root", "-"},
                                          {"LOCAL:COMM:NOT_FREED", "warning", "leak", "0"},
                                          {"LOCAL:COMM:NOT_FREED", "warning", "leak", "1"}});
  CHECK(result.succeeded());
}

TEST_CASE("ci reports: a rank's crash is an error at the line that crashed", "[ci_reports]") {
  const JobResult result =
      run_and_check(TEST_PROGRAM(segfault), {}, {}, {{"LOCAL:EXIT:SIGNAL", "error", "crashes", "1"}});
  CHECK(result.failed());
}

TEST_CASE("ci reports: a clean run has one passing test case and no SARIF result", "[ci_reports]") {
  const JobResult result = run_and_check(TEST_PROGRAM(ci_reports), {"clean"}, {}, {});
  CHECK(result.succeeded());
}
