// Hard deadlocks: every rank blocked in MPI, waiting for another.
#include <catch2/catch.hpp>

#include "scenario.hpp"
#include "ssend_ring.hpp"

using namespace harness;

// Each program's ranks, verdict, blocked calls and blocking functions are
// written in the program (expectation_of in scenario.hpp).

TEST_CASE("recv_recv: two ranks each receive from the other", "[deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(recv_recv));
}

TEST_CASE("recv_recv: checked through LD_PRELOAD and environment variables", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  const ProgramExpectation expected = expectation_of(program);
  const JobResult result =
      run_job(workspace, plain_command(expected.ranks, program), preload_environment(workspace));
  check_deadlock(result, program, expected.deadlock);
}

TEST_CASE("windows_then_cycle: a cycle after windows of requests whose handles share their low bits", "[deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(windows_then_cycle));
}

TEST_CASE("barrier_missing: the last rank never reaches the barrier", "[deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(barrier_missing));
}

TEST_CASE("irecv_wait: waiting on receives that nobody matches", "[deadlock]") {
  const JobResult result = check_expected_deadlock(TEST_PROGRAM(irecv_wait));
  // The report describes the request's receive.
  INFO(describe(result));
  CHECK(result.report.value_or("").find("tag=7") != std::string::npos);
}

TEST_CASE("persistent_collective: a persistent barrier's third start that one rank never makes", "[deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(persistent_collective));
}

TEST_CASE("persistent_collective: every rank starting each time, barrier or broadcast, or both in one Waitall, is no "
          "deadlock",
          "[deadlock][clean]") {
  const std::string mode = GENERATE("all", "bcast", "waitall");
  INFO("mode " << mode);
  Workspace workspace;
  const JobResult result =
      check_unchanged_by_checker(workspace, 3, TEST_PROGRAM(persistent_collective), {"--check-all"}, {mode});
  INFO(describe(result));
  CHECK(result.err.find("] ERROR:") == std::string::npos);
}

TEST_CASE("split_collective: a reduction on a split communicator meets a receive", "[deadlock]") {
  check_expected_deadlock(TEST_PROGRAM(split_collective));
}

TEST_CASE("recv_recv_fortran: calls through the Fortran bindings are checked", "[deadlock]") {
  // gfortran names the main program's function itself: its line says any function.
  check_expected_deadlock(TEST_PROGRAM(recv_recv_fortran));
}

TEST_CASE("ssend_ring: every rank sends synchronously to its right first", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(ssend_ring);
  const JobResult result = run_checked(workspace, 4, program, kDeadlockOptions);
  check_deadlock(result, program, ssend_ring_deadlock(4, "pass_to_right"));
}

TEST_CASE("ssend_ring_cpp: stacks show demangled C++ names", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(ssend_ring_cpp);
  const JobResult result = run_checked(workspace, 3, program, kDeadlockOptions);
  check_deadlock(result, program, ssend_ring_deadlock(3, "halo::send_boundary"));
}

TEST_CASE("example: the bundled halo exchange deadlocks", "[deadlock]") {
  Workspace workspace;
  const Program example{EXAMPLE_DEADLOCK, EXAMPLE_DEADLOCK_SOURCE};
  const JobResult result = run_checked(workspace, 4, example, kDeadlockOptions);
  check_deadlock(result, example, ssend_ring_deadlock(4, "exchange_halo"));
}
