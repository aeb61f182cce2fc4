// Correct programs, some of them slow or unbalanced: the checker must stay
// silent and change nothing.
#include <catch2/catch.hpp>

#include "scenario.hpp"

using namespace harness;

TEST_CASE("imbalance: ranks waiting in a barrier for a computing rank", "[clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 3, TEST_PROGRAM(imbalance), kDeadlockOptions, {kLongComputation});
  check_clean_run(result, workspace);
}

TEST_CASE("imbalance: ranks waiting in a barrier for a rank that computes for a minute, with the defaults",
          "[clean][.slow]") {
  // DEADLOCK-TIMEOUT auto proves deadlocks within a second: a minute of
  // waiting for a rank that computes must still be no verdict.
  Workspace workspace;
  const JobResult result = run_checked(workspace, 3, TEST_PROGRAM(imbalance), {}, {"60"});
  check_clean_run(result, workspace);
}

TEST_CASE("pingpong: the same checksum with and without the checker", "[clean]") {
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(pingpong), kDeadlockOptions);
  INFO(describe(plain));
  CHECK(plain.succeeded());
  CHECK(plain.out.starts_with("checksum "));
}

TEST_CASE("finalize_spread: ranks reaching MPI_Finalize seconds apart", "[clean]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 4, TEST_PROGRAM(finalize_spread), kDeadlockOptions);
  check_clean_run(result, workspace);
}

TEST_CASE("exit_status: the program's own exit status is kept", "[clean]") {
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(exit_status), kDeadlockOptions);
  INFO(describe(plain));
  CHECK(plain.exit_status == 3);
}

TEST_CASE("slow_progress: reductions every half second are progress", "[clean]") {
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 4, TEST_PROGRAM(slow_progress), kDeadlockOptions, {kLongComputation});
  check_clean_run(result, workspace);
}

TEST_CASE("slow_collective: every rank inside one reduction longer than the timeout", "[clean]") {
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 3, TEST_PROGRAM(slow_collective), kDeadlockOptions, {kLongComputation});
  check_clean_run(result, workspace);
  CHECK(result.out == "sum 3\n");
}

TEST_CASE("thread_level: the program is told the thread level it asked for", "[clean]") {
  // MPI runs at the program's level (MPI_THREAD_FUNNELED for single).
  const std::string level = GENERATE(as<std::string>{}, "single", "funneled", "serialized", "multiple");
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(thread_level), kDeadlockOptions, {level});
  CHECK(plain.out == "provided " + level + "\nqueried " + level + "\n");
}

TEST_CASE("thread_level: after plain MPI_Init, MPI_Query_thread answers as without the checker", "[clean]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(thread_level), kDeadlockOptions, {"none"});
  CHECK(plain.out == "queried single\n");
}

TEST_CASE("threads_sendrecv_self: four threads per rank exchange with their own rank, then finalize", "[clean][threads]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(threads_sendrecv_self), kDeadlockOptions);
  CHECK(plain.out == "sum 99980000\n");
}

TEST_CASE("own_fmt: a program with fmt of its own, exported, formats and is checked as without it", "[clean]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(own_fmt);
  const JobResult plain = check_unchanged_by_checker(workspace, 3, program, kDeadlockOptions, {"correct"});
  CHECK(plain.out == "rank 0 of 3 got 2: 3.142   ok\n");
  const JobResult hang = run_checked(workspace, 3, program, kDeadlockOptions, {"hang"});
  check_deadlock(hang, program,
                 {.calls = {{0, R"(MPI_Ssend\(.*dest=1\b)"}, {1, R"(MPI_Ssend\(.*dest=2\b)"}, {2, R"(MPI_Ssend\(.*dest=0\b)"}},
                  .blocking_functions = {"main"}});
}

// Each behaviour that is off by default sends every wrapper to its slow
// body (interceptors/protocol.hpp), which MPI_Init names at VERBOSE 2; with
// the defaults, no wrapper takes it. A switch that set no bit would run the
// fast body, which skips what that switch asks for.
TEST_CASE("pingpong: each behaviour off by default takes the wrappers' slow path, the defaults none", "[clean]") {
  Workspace workspace;
  const std::string dir = (workspace.dir() / "files").string();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{}, "none"},
      {{"--check-all"}, "checks off by default"},
      {{"--check", "LOCAL:MPI:CALL_FAILED ON"}, "checks off by default"},
      {{"--potential"}, "checks off by default, GLOBAL:DEADLOCK:POTENTIAL"},
      {{"--patient-waits", "on"}, "PATIENT-WAITS"},
      {{"--inject-delays", "7,5,1l"}, "INJECT-DELAYS"},
      {{"--record", dir + "/recording"}, "RECORD/REPLAY"},
      {{"--comm-log", dir + "/log"}, "COMM-LOG, RECORD/REPLAY"},
  };
  for (const auto& [options, paths] : cases) {
    std::vector<std::string> verbose = options;
    verbose.insert(verbose.end(), {"--verbose", "2"});
    const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(pingpong), verbose);
    INFO(describe(result));
    CHECK(result.succeeded());
    CHECK(result.err.find("the wrappers' slow paths: " + paths + "\n") != std::string::npos);
  }
}

// A program of MPI 4.0 sessions alone (no MPI_Init, so no MPI_COMM_WORLD for
// the checker to start on) runs as without the checker, which says once
// per process that it does not check it.
TEST_CASE("sessions_only: a program without MPI_Init runs unchanged, and is said to be unchecked", "[clean]") {
  Workspace workspace;
  check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(sessions_only), {"--check-all"});
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(sessions_only), {"--check-all"});
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(count_occurrences(result.err, "this process started MPI with MPI_Session_init and has not called MPI_Init") ==
        2u);
}
