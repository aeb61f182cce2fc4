// The checker leaves a program's endings as they are: a child the rank forks
// ends as fast and as it would without the checker, MPI_Finalize may run
// while the process exits, and MPI_Abort's code is the job's status.
#include <algorithm>
#include <sstream>

#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// The ranks print in either order.
std::vector<std::string> sorted_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Longer than the checker's start and end take; shorter than the 10 s an
// exiting child once waited for a monitor thread it does not have.
constexpr double kMostExtraSeconds = 4;

// Each rank forks a child that ends as `variant` says and prints how it did.
void check_child_unchanged(const std::string& variant, const std::string& rank_1_line) {
  const Program program = TEST_PROGRAM(fork_child);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(2, program, {variant}));
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {variant});
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  check_clean_run(checked, workspace);
  CHECK(sorted_lines(checked.out) == sorted_lines(plain.out));
  CHECK(checked.out.find(rank_1_line) != std::string::npos);
  CHECK(checked.elapsed_seconds < plain.elapsed_seconds + kMostExtraSeconds);
}

}  // namespace

TEST_CASE("fork: a child that calls exit(0) ends as fast as without the checker", "[exit_paths][fork]") {
  check_child_unchanged("exit", "rank 1: child exited with status 0");
}

TEST_CASE("fork: a child's crash is the child's, not reported as a rank's", "[exit_paths][fork]") {
  check_child_unchanged("crash", "rank 1: child ended by signal 11");
}

TEST_CASE("finalize at exit: MPI_Finalize in an atexit handler registered before MPI_Init is no early exit",
          "[exit_paths][finalize]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(finalize_at_exit), kDeadlockOptions, {"atexit"});
  CHECK(plain.out.find("rank 1 finalized in an atexit handler") != std::string::npos);
}

TEST_CASE("finalize at exit: MPI_Finalize in a global object's destructor is no early exit", "[exit_paths][finalize]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(finalize_at_exit), kDeadlockOptions, {"destructor"});
  CHECK(plain.out.find("rank 1 finalized in a global object's destructor") != std::string::npos);
}

TEST_CASE("MPI_Abort(MPI_COMM_WORLD, 300) in an error handler ends the job with 44, as without the checker",
          "[exit_paths][abort]") {
  const Program program = TEST_PROGRAM(abort_status);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {"single"});
  CHECK(checked.exit_status == 300 % 256);
  check_ending_possible_without_checker(workspace, plain_command(2, program, {"single"}), checked);
  INFO(describe(checked));
  // The one error is the send to rank 5, before the call (LOCAL:ARGUMENT:RANK, on by default).
  CHECK(count_occurrences(checked.err, "] ERROR: LOCAL:ARGUMENT:RANK: error") == 1u);
  CHECK(count_occurrences(checked.err, ": error\n") == 1u);
}

// MPICH itself fails an assertion there at MPI_THREAD_MULTIPLE: the checker
// keeps that ending too.
TEST_CASE("MPI_Abort in an error handler at MPI_THREAD_MULTIPLE ends as without the checker", "[exit_paths][abort]") {
  const Program program = TEST_PROGRAM(abort_status);
  Workspace workspace;
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {"multiple"});
  check_ending_possible_without_checker(workspace, plain_command(2, program, {"multiple"}), checked);
}

TEST_CASE("after MPI_Finalize: a collective gets MPI's own error, naming the program's call", "[exit_paths][finalize]") {
  const Program program = TEST_PROGRAM(after_finalize);
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(2, program));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE_FALSE(plain.timed_out);
  if (plain.err.find("internal_Allreduce") == std::string::npos) return;  // another MPI's words
  // With the consistency checks on, the collective check asked MPI about the communicator first, and MPI's
  // error named that question (internal_Comm_test_inter).
  const JobResult checked = run_checked(workspace, 2, program, {"--check-all"});
  INFO(describe(checked));
  REQUIRE_FALSE(checked.timed_out);
  CHECK(checked.err.find("internal_Allreduce") != std::string::npos);
  CHECK(checked.err.find("internal_Comm") == std::string::npos);
}
