// Bad settings stop the launcher before the program starts, with a message
// that says which setting and where.
#include <fstream>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"
#include "stopped_before_running.hpp"

using namespace harness;

namespace {

constexpr int kUsageError = 2;

}  // namespace

TEST_CASE("launcher: a bad option value is named and nothing runs", "[config]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(pingpong), {"--deadlock-timeout", "5x"});
  check_stopped_before_running(result, kUsageError);
  INFO(describe(result));
  CHECK(result.err.find("--deadlock-timeout") != std::string::npos);
}

TEST_CASE("launcher: a bad line of a config file is named by file:line", "[config]") {
  Workspace workspace;
  const std::filesystem::path config = workspace.dir() / "bad.conf";
  std::ofstream(config) << "# a test configuration\n"
                           "DEADLOCK-TIMEOUT 3s\n"
                           "DEADLOCK-WARNING 5x\n";
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(pingpong), {"--config", config.string()});
  check_stopped_before_running(result, kUsageError);
  INFO(describe(result));
  CHECK(result.err.find("bad.conf:3") != std::string::npos);
}

TEST_CASE("preloaded library: a bad variable stops the run in MPI_Init, named", "[config]") {
  Workspace workspace;
  Environment environment = preload_environment(workspace);
  environment.emplace_back("MPISENTRY_DEADLOCK_WARNING", "5x");
  const JobResult result = run_job(workspace, plain_command(2, TEST_PROGRAM(pingpong)), environment);
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.exit_status != 0);
  CHECK(result.out.find("checksum") == std::string::npos);
  CHECK(result.err.find("MPISENTRY_DEADLOCK_WARNING") != std::string::npos);
  CHECK(result.err.find("\"5x\": unknown time unit 'x'") != std::string::npos);
}

// A misspelt variable leaves its setting at the default: said once, through
// the launcher or by rank 0 of a preloaded run, and the job runs.
TEST_CASE("a misspelt MPISENTRY_ variable is named once, with the nearest known name", "[config]") {
  const std::string notice =
      "MPISENTRY_DEADLOCK_TIMOUT: unknown variable, ignored (did you mean MPISENTRY_DEADLOCK_TIMEOUT?)";
  Workspace workspace;
  const JobResult launched = run_job(workspace, checked_command(workspace, 2, TEST_PROGRAM(pingpong), {}),
                                     {{"MPISENTRY_DEADLOCK_TIMOUT", "3s"}});
  {
    INFO(describe(launched));
    CHECK(launched.succeeded());
    CHECK(count_occurrences(launched.err, notice) == 1);
    CHECK(launched.out.find("checksum") != std::string::npos);
  }
  Environment preloaded = preload_environment(workspace);
  preloaded.emplace_back("MPISENTRY_DEADLOCK_TIMOUT", "3s");
  const JobResult direct = run_job(workspace, plain_command(2, TEST_PROGRAM(pingpong)), preloaded);
  INFO(describe(direct));
  CHECK(direct.succeeded());
  CHECK(count_occurrences(direct.err, notice) == 1);
}

TEST_CASE("an unwritable report file is named at start, and the report still reaches stderr", "[config]") {
  Workspace workspace;
  const std::string unwritable = (workspace.dir() / "no-such-folder" / "report.txt").string();
  const JobResult result = run_job(
      workspace, {MPISENTRY_LAUNCHER, "--deadlock-timeout", kDeadlockTimeout, "--report-file", unwritable, "-n", "2",
                  PROGRAM_recv_recv});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.failed());
  CHECK(result.err.find("report file \"" + unwritable + "\" cannot be written") != std::string::npos);
  CHECK(result.err.find("[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error") != std::string::npos);
  CHECK(result.err.find("cannot write report file \"" + unwritable + "\"") != std::string::npos);
}
