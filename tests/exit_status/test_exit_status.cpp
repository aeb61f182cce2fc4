// The job's exit status, each row of the table in config/exit_status.hpp
// (README "Exit status") by a real job of finding_job, and SUPPRESSIONS by
// function, file and library, each beside its twin that does not match.
#include <catch2/catch.hpp>

#include <csignal>
#include <fstream>
#include <regex>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

constexpr int kErrorExitcode = 42;
const std::vector<std::string> kErrorExitcodeOptions = {"--error-exitcode", std::to_string(kErrorExitcode)};
// LOCAL:MPI:CALL_FAILED on, and no abort at the first error (CHECK-MAX-ERRORS 1).
const std::vector<std::string> kCallFailedToTheEnd = {"--check", "LOCAL:MPI:CALL_FAILED ON", "--check-max-errors", "0"};
const std::string kLeakWarning = "] WARNING: LOCAL:COMM:NOT_FREED:";

JobResult run_finding_job(const Workspace& workspace, const std::vector<std::string>& options,
                          const std::string& variant, int status = 0) {
  const JobResult result =
      run_checked(workspace, 2, TEST_PROGRAM(finding_job), options, {variant, std::to_string(status)});
  INFO(describe(result));
  REQUIRE(!result.timed_out);
  return result;
}

// A suppressions file in the workspace with `lines`; the options that name it.
std::vector<std::string> suppressions(const Workspace& workspace, const std::string& lines) {
  const std::string path = (workspace.dir() / "known.supp").string();
  std::ofstream(path) << "# known findings\n" << lines << '\n';
  return {"--suppressions", path};
}

}  // namespace

TEST_CASE("exit status: with nothing found the program's own status, 0 or 3, stays, ERROR-EXITCODE set or not",
          "[exit_status]") {
  Workspace workspace;
  for (const int status : {0, 3}) {
    INFO("the program returns " << status);
    CHECK(run_finding_job(workspace, {}, "clean", status).exit_status == status);
    CHECK(run_finding_job(workspace, with(kErrorExitcodeOptions, kCallFailedToTheEnd), "clean", status).exit_status ==
          status);
  }
}

TEST_CASE("exit status: findings without ERROR-EXITCODE leave the program's status", "[exit_status]") {
  Workspace workspace;
  const JobResult warned = run_finding_job(workspace, {}, "warning");
  CHECK(warned.exit_status == 0);
  CHECK(warned.err.find(kLeakWarning) != std::string::npos);
  const JobResult erred = run_finding_job(workspace, kCallFailedToTheEnd, "error", 3);
  CHECK(erred.exit_status == 3);
  CHECK(erred.err.find("] ERROR: LOCAL:MPI:CALL_FAILED: error") != std::string::npos);
}

TEST_CASE("exit status: an error on one rank gives every rank ERROR-EXITCODE, over the program's own status",
          "[exit_status]") {
  Workspace workspace;
  for (const int status : {0, 3}) {
    INFO("the program returns " << status);
    const JobResult result = run_finding_job(workspace, with(kErrorExitcodeOptions, kCallFailedToTheEnd), "error", status);
    CHECK(result.exit_status == kErrorExitcode);
    CHECK(result.err.find("[1] ERROR: LOCAL:MPI:CALL_FAILED: error") != std::string::npos);
  }
}

TEST_CASE("exit status: a warning counts for ERROR-EXITCODE only with --warnings-are-errors", "[exit_status]") {
  Workspace workspace;
  CHECK(run_finding_job(workspace, kErrorExitcodeOptions, "warning").exit_status == 0);
  CHECK(run_finding_job(workspace, with(kErrorExitcodeOptions, {"--warnings-are-errors"}), "warning").exit_status ==
        kErrorExitcode);
  CHECK(run_finding_job(workspace, with(kErrorExitcodeOptions, {"--warnings-are-errors", "off"}), "warning")
            .exit_status == 0);
}

TEST_CASE("exit status: a deadlock ends the job with 86, whatever ERROR-EXITCODE says", "[exit_status]") {
  Workspace workspace;
  for (const auto& options : {std::vector<std::string>{}, kErrorExitcodeOptions}) {
    const JobResult result = run_finding_job(workspace, options, "deadlock");
    CHECK(result.exit_status == 86);
    CHECK(result.err.find("] ERROR: GLOBAL:DEADLOCK:HARD: fatal error") != std::string::npos);
  }
}

TEST_CASE("exit status: a potential deadlock ends the job with 86 too", "[exit_status]") {
  Workspace workspace;
  const JobResult result = run_finding_job(workspace, with(kErrorExitcodeOptions, {"--potential"}), "sends");
  CHECK(result.exit_status == 86);
  CHECK(result.err.find("] ERROR: GLOBAL:DEADLOCK:POTENTIAL: fatal error") != std::string::npos);
}

TEST_CASE("exit status and suppressions: the monitor's warnings, found on rank 0, count with --warnings-are-errors "
          "and are left out by a matching line",
          "[exit_status][suppressions]") {
  // Rank 0 polls while rank 1 computes 5 s: GLOBAL:DEADLOCK:NO_PROGRESS after 2 x 1 s, with room for a
  // loaded machine.
  const Program program = TEST_PROGRAM(poll_then_receive);
  const std::vector<std::string> options =
      with(kErrorExitcodeOptions, {"--warnings-are-errors", "--deadlock-warning", "1s"});
  const std::string warning = "[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS: warning";
  Workspace workspace;
  const JobResult counted = run_checked(workspace, 2, program, options, {"5"});
  INFO(describe(counted));
  CHECK(counted.exit_status == kErrorExitcode);
  CHECK(counted.err.find(warning) != std::string::npos);
  const JobResult twin =
      run_checked(workspace, 2, program, with(options, suppressions(workspace, "GLOBAL:DEADLOCK:*:fun:other")), {"5"});
  INFO(describe(twin));
  CHECK(twin.exit_status == kErrorExitcode);
  const JobResult suppressed =
      run_checked(workspace, 2, program, with(options, suppressions(workspace, "GLOBAL:DEADLOCK:*:fun:main")), {"5"});
  INFO(describe(suppressed));
  CHECK(suppressed.exit_status == 0);
  CHECK(suppressed.err.find(warning) == std::string::npos);
  // How many warnings the monitor gives in those 5 s varies with the machine's load.
  CHECK(std::regex_search(suppressed.err, std::regex(R"(\[0\] INFO: GLOBAL:DEADLOCK:NO_PROGRESS: found 0 times )"
                                                     R"(\(0 errors \+ 0 warnings\), [1-9]\d* reports? (was|were) suppressed\n)")));
}

TEST_CASE("exit status: CHECK-MAX-ERRORS aborts with 1, or with ERROR-EXITCODE when set", "[exit_status]") {
  Workspace workspace;
  const std::vector<std::string> call_failed = {"--check", "LOCAL:MPI:CALL_FAILED ON"};
  const JobResult plain = run_finding_job(workspace, call_failed, "error");
  CHECK(plain.exit_status == 1);
  CHECK(plain.err.find("limit CHECK-MAX-ERRORS reached => aborting") != std::string::npos);
  CHECK(run_finding_job(workspace, with(call_failed, kErrorExitcodeOptions), "error").exit_status == kErrorExitcode);
}

TEST_CASE("exit status: a bad setting stops the job with 2 before it starts", "[exit_status]") {
  Workspace workspace;
  const JobResult result = run_finding_job(workspace, {"--error-exitcode", "256"}, "clean");
  CHECK(result.exit_status == 2);
  CHECK(result.err.find("ERROR-EXITCODE \"256\": out of range (0 to 255)") != std::string::npos);
}

TEST_CASE("exit status: a launcher line whose command cannot be run ends with 127", "[exit_status]") {
  Workspace workspace;
  const JobResult result = run_job(workspace, {MPISENTRY_LAUNCHER, "--", "/nonexistent/mpiexec", "-n", "2", "true"});
  INFO(describe(result));
  CHECK(result.exit_status == 127);
  CHECK(result.err.find("cannot run /nonexistent/mpiexec") != std::string::npos);
}

TEST_CASE("exit status: a rank's crash ends the job with the signal's status, as without the checker, ERROR-EXITCODE "
          "or not",
          "[exit_status]") {
  Workspace workspace;
  const JobResult result = run_finding_job(workspace, kErrorExitcodeOptions, "crash");
  if (!MPISENTRY_BUILT_FOR_OPEN_MPI) CHECK(result.exit_status == SIGSEGV);  // Hydra's: the signal's number
  CHECK(result.err.find("LOCAL:EXIT:SIGNAL") != std::string::npos);
  check_ending_possible_without_checker(workspace, plain_command(2, TEST_PROGRAM(finding_job), {"crash", "0"}), result);
}

TEST_CASE("suppressions: by function, file and library a warning is neither printed nor counted, and the twin that "
          "does not match is both",
          "[exit_status][suppressions]") {
  struct Case {
    std::string variant, matching, other;
  };
  const Case cases[] = {
      {"warning", "LOCAL:COMM:NOT_FREED:fun:make_halo_*", "LOCAL:COMM:NOT_FREED:fun:make_ghost_*"},
      {"warning", "LOCAL:*:NOT_FREED:src:finding_job.c", "LOCAL:*:NOT_FREED:src:finding_helper.c"},
      {"library", "LOCAL:COMM:NOT_FREED:lib:libfinding_helper.so", "LOCAL:COMM:NOT_FREED:lib:libother.so"},
      // A line for another check leaves this one alone.
      {"warning", "LOCAL:COMM:NOT_FREED:fun:make_halo_comm", "LOCAL:GROUP:NOT_FREED:fun:make_halo_comm"},
  };
  const std::vector<std::string> strict = with(kErrorExitcodeOptions, {"--warnings-are-errors"});
  for (const Case& c : cases) {
    INFO(c.variant << ": " << c.matching << " / " << c.other);
    Workspace workspace;
    const JobResult suppressed = run_finding_job(workspace, with(strict, suppressions(workspace, c.matching)), c.variant);
    CHECK(suppressed.exit_status == 0);
    CHECK(suppressed.err.find(kLeakWarning) == std::string::npos);
    REQUIRE(suppressed.report.has_value());
    CHECK(suppressed.report->find(
              "[0] INFO: LOCAL:COMM:NOT_FREED: found 0 times (0 errors + 0 warnings), 1 report was suppressed\n") !=
          std::string::npos);
    const JobResult twin = run_finding_job(workspace, with(strict, suppressions(workspace, c.other)), c.variant);
    CHECK(twin.exit_status == kErrorExitcode);
    CHECK(twin.err.find(kLeakWarning) != std::string::npos);
  }
}

TEST_CASE("suppressions: an error left out does not count for ERROR-EXITCODE nor for CHECK-MAX-ERRORS",
          "[exit_status][suppressions]") {
  Workspace workspace;
  const JobResult result = run_finding_job(
      workspace,
      // The send's rank is LOCAL:ARGUMENT:RANK too, before the call: off, to leave CALL_FAILED's alone.
      with(with(with(kErrorExitcodeOptions, {"--check", "LOCAL:MPI:CALL_FAILED ON"}), kArgumentChecksOff),
           suppressions(workspace, "LOCAL:MPI:CALL_FAILED:fun:send_to_missing_rank")),
      "error", 0);
  CHECK(result.exit_status == 0);
  CHECK(result.err.find("LOCAL:MPI:CALL_FAILED: error") == std::string::npos);
}

TEST_CASE("suppressions: a bad line, or one for a deadlock, stops the job with 2, naming the file, line and text",
          "[exit_status][suppressions]") {
  const std::pair<std::string, std::string> cases[] = {
      {"LOCAL:COMM:NOT_FREED make_halo_comm", "not a suppression; write CHECK:fun:PATTERN"},
      {"GLOBAL:DEADLOCK:HARD:fun:main", "GLOBAL:DEADLOCK:HARD cannot be suppressed"},
      {"LOCAL:COMM:NOT_FREEED:fun:main", "matches no check (did you mean LOCAL:COMM:NOT_FREED?)"},
  };
  for (const auto& [line, problem] : cases) {
    INFO(line);
    Workspace workspace;
    const JobResult result = run_finding_job(workspace, suppressions(workspace, line), "clean");
    CHECK(result.exit_status == 2);
    const std::string where = (workspace.dir() / "known.supp").string() + ":2: ";
    CHECK(result.err.find("mpisentry: " + where) != std::string::npos);
    CHECK(result.err.find(problem) != std::string::npos);
    CHECK(result.err.find("\"" + line + "\"") != std::string::npos);
  }
}
