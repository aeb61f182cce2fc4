// Correct programs, some of them slow or unbalanced: the checker must stay
// silent and change nothing.
#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

namespace {

// The computation's length: well past the timeout, so that a checker that
// took waiting for a busy rank as a deadlock would report one.
const std::string kLongComputation = std::to_string(3 * kDeadlockTimeoutSeconds);

}  // namespace

TEST_CASE("imbalance: ranks waiting in a barrier for a computing rank", "[clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 3, TEST_PROGRAM(imbalance), kDeadlockOptions, {kLongComputation});
  check_clean_run(result, workspace);
}

TEST_CASE("pingpong: the same checksum with and without the checker", "[clean]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(pingpong);
  const JobResult plain = run_job(workspace, plain_command(2, program));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  REQUIRE(plain.out.starts_with("checksum "));

  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions);
  check_clean_run(checked, workspace);
  INFO(describe(checked));
  CHECK(checked.out == plain.out);
}

TEST_CASE("finalize_spread: ranks reaching MPI_Finalize seconds apart", "[clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 4, TEST_PROGRAM(finalize_spread), kDeadlockOptions);
  check_clean_run(result, workspace);
}

TEST_CASE("exit_status: the program's own exit status is kept", "[clean]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(exit_status);
  const JobResult plain = run_job(workspace, plain_command(2, program));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.exit_status == 3);

  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions);
  check_clean_run(checked, workspace, plain.exit_status);
}

TEST_CASE("slow_progress: reductions every half second are progress", "[clean]") {
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 4, TEST_PROGRAM(slow_progress), kDeadlockOptions, {kLongComputation});
  check_clean_run(result, workspace);
}
