// Hard deadlocks: every rank blocked in MPI, waiting for another.
#include <catch2/catch.hpp>

#include "scenario.hpp"
#include "ssend_ring.hpp"

using namespace harness;

namespace {

ExpectedDeadlock recv_recv_deadlock() {
  return {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
          .blocking_functions = {"exchange"}};
}

}  // namespace

TEST_CASE("recv_recv: two ranks each receive from the other", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program, recv_recv_deadlock());
}

TEST_CASE("recv_recv: checked through LD_PRELOAD and environment variables", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv);
  const JobResult result = run_job(workspace, plain_command(2, program), preload_environment(workspace));
  check_deadlock(result, program, recv_recv_deadlock());
}

TEST_CASE("windows_then_cycle: a cycle after windows of requests whose handles share their low bits", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(windows_then_cycle);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"exchange"}});
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

TEST_CASE("barrier_missing: the last rank never reaches the barrier", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(barrier_missing);
  const JobResult result = run_checked(workspace, 4, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Barrier\()"}, {1, R"(MPI_Barrier\()"}, {2, R"(MPI_Barrier\()"}, {3, R"(MPI_Recv\()"}},
                  .blocking_functions = {"synchronize", "wait_for_work"}});
}

TEST_CASE("irecv_wait: waiting on receives that nobody matches", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(irecv_wait);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Wait\()"}, {1, R"(MPI_Wait\()"}}, .blocking_functions = {"await_reply"}});
  // The report describes the request's receive.
  INFO(describe(result));
  CHECK(result.report.value_or("").find("tag=7") != std::string::npos);
}

TEST_CASE("split_collective: a reduction on a split communicator meets a receive", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(split_collective);
  const JobResult result = run_checked(workspace, 4, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Allreduce\(.*comm=(?!MPI_COMM_WORLD))"}, {2, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"reduce_within_group", "wait_for_leader"}});
}

TEST_CASE("recv_recv_fortran: calls through the Fortran bindings are checked", "[deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(recv_recv_fortran);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  // gfortran names the main program's function itself: check file:line only.
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\()"}, {1, R"(MPI_Recv\()"}}, .blocking_functions = {""}});
}

TEST_CASE("example: the bundled halo exchange deadlocks", "[deadlock]") {
  Workspace workspace;
  const Program example{EXAMPLE_DEADLOCK, EXAMPLE_DEADLOCK_SOURCE};
  const JobResult result = run_checked(workspace, 4, example, kDeadlockOptions);
  check_deadlock(result, example, ssend_ring_deadlock(4, "exchange_halo"));
}
