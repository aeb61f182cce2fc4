// Threaded programs at every thread level: deadlocks whose blocked thread is
// an OpenMP master or a worker that took its turn, many threads exchanging at
// once, short-lived threads, and programs that break their thread level.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// threads_stress under ctest: 8 threads per rank as in scripts/stress, with
// fewer exchanges each so that the test takes seconds on 2 cores; then rank
// 0 computes well past the timeout.
const std::string kStressThreads = "8";
const std::string kStressExchanges = "5000";

}  // namespace

TEST_CASE("threads_stress: 8 threads per rank exchange with the other rank's threads, then rank 0 computes",
          "[clean][threads]") {
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(threads_stress), kDeadlockOptions,
                                                     {kStressThreads, kStressExchanges, kLongComputation});
  CHECK(plain.out.starts_with("checksum "));
}

TEST_CASE("omp_funneled: the master thread of an OpenMP region waits in MPI_Recv on both ranks",
          "[threads][deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(omp_funneled);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  // gcc names the region's outlined function main._omp_fn.0.
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"main._omp_fn.0"}});
  // Only the master called MPI, as FUNNELED allows: no thread-level notice.
  INFO(describe(result));
  CHECK(result.err.find("MPI_THREAD_FUNNELED, yet") == std::string::npos);
}

TEST_CASE("serialized_turns: a worker thread, not the one that initialized MPI, waits in MPI_Recv",
          "[threads][deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(serialized_turns);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions);
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"last_turn"}});
  // The worker's own stack, down to its start routine; the turns were taken
  // one at a time, so no notice.
  INFO(describe(result));
  CHECK(any_line_matches(result.report.value_or(""), R"(take_turns \(([^\s()]*/)?serialized_turns\.c:\d+\))"));
  CHECK(result.err.find("MPI_THREAD_SERIALIZED, yet") == std::string::npos);
}

TEST_CASE("thread_churn: 16,000 short-lived threads call MPI while the monitor samples them",
          "[clean][threads]") {
  // A short timeout and interval: rank 1 waits past the timeout, and both
  // monitors sample many times while threads register and retire.
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(
      workspace, 2, TEST_PROGRAM(thread_churn),
      {"--deadlock-timeout", "300l", "--deadlock-check-interval", "5l"}, {"16000"});
  CHECK(plain.out == "sum 96000\n");
}

TEST_CASE("thread_level_misuse: a second thread calls MPI at a level that allows only one", "[threads]") {
  const std::string level = GENERATE(as<std::string>{}, "single", "funneled");
  INFO("thread level " << level);
  const std::string level_name = level == "single" ? "MPI_THREAD_SINGLE" : "MPI_THREAD_FUNNELED";
  Workspace workspace;
  const Program program = TEST_PROGRAM(thread_level_misuse);
  const JobResult plain = run_job(workspace, plain_command(2, program, {level}));
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  // MPI's own behaviour: the sends arrive (MPICH gives MULTIPLE inside).
  CHECK(plain.out.ends_with("received sum 190\n"));

  // LOCAL:THREAD:NOT_MAIN (on by default) reports it once, and lets the program go on.
  const JobResult checked = run_checked(workspace, 2, program, kDeadlockOptions, {level});
  INFO(describe(checked));
  CHECK(checked.succeeded());
  CHECK(checked.out == plain.out);
  REQUIRE(checked.report.has_value());
  CHECK(count_occurrences(*checked.report, "ERROR: LOCAL:THREAD:NOT_MAIN: error") == 1u);
  // One notice, from rank 0, for 20 calls over several monitor ticks.
  const std::string notice = "[mpisentry 0] warning: the program runs at " + level_name + ", yet thread 1 (tid ";
  CHECK(count_occurrences(checked.err, notice) == 1);
  CHECK(count_occurrences(checked.err, ", yet ") == 1);
  CHECK(any_line_matches(checked.err, regex_escape(notice) + R"(\d+\) called MPI_Send: only the thread that )"
                                          R"(initialized MPI may call it at this level; ask MPI_Init_thread for )"
                                          R"(MPI_THREAD_MULTIPLE$)"));
}

TEST_CASE("thread_level: MPI gives less than the program asks for: it is told so, and checked", "[threads]") {
  // thread_level_cap.so lowers what MPICH provides to MPI_THREAD_SERIALIZED.
  const Program program = TEST_PROGRAM(thread_level);
  const Environment capped = {{"LD_PRELOAD", THREAD_LEVEL_CAP_LIBRARY}};
  Workspace workspace;
  const JobResult plain = run_job(workspace, plain_command(2, program, {"multiple"}), capped);
  INFO("without the checker:\n" << describe(plain));
  REQUIRE(plain.succeeded());
  CHECK(plain.out == "provided serialized\nqueried serialized\n");

  // The launcher puts the checker first in LD_PRELOAD; its PMPI_Init_thread
  // then finds the cap's.
  const JobResult checked = run_job(workspace, checked_command(workspace, 2, program, kDeadlockOptions, {"multiple"}),
                                    capped);
  INFO(describe(checked));
  check_clean_run(checked, workspace);
  CHECK(checked.out == plain.out);
  CHECK(checked.err.find("checking 2 ranks") != std::string::npos);
}

TEST_CASE("join_waits join and cond: workers wait in MPI_Recv for tags never sent while the main thread joins them "
          "(join) or waits on a condition variable, a third thread on its mutex (cond)",
          "[threads][deadlock]") {
  const std::string variant = GENERATE(as<std::string>{}, "join", "cond");
  INFO("variant " << variant);
  Workspace workspace;
  const Program program = TEST_PROGRAM(join_waits);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions, {variant});
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Recv\(.*source=1\b)"}, {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"worker_receives"}});
  INFO(describe(result));
  CHECK(result.err.find("threads outside MPI sleep in waits that only their own process can end") !=
        std::string::npos);
  // Proven at once (DEADLOCK-TIMEOUT auto): the verdict comes a few ticks
  // after the threads outside MPI were first seen held; the MPI's start-up
  // and teardown, which take seconds longer under Open MPI, are not counted.
  const double blocked_seconds = parse_blocked_calls(*result.report).longest_blocked_seconds;
  WARN(variant << ": the verdict came " << blocked_seconds << " s after the ranks blocked, the job ended "
               << result.elapsed_seconds << " s after it started (DEADLOCK-TIMEOUT auto)");
  CHECK(blocked_seconds < kDeadlockJobSeconds);
}

TEST_CASE("join_waits join-correct: the same shape, one worker computes twice DEADLOCK-TIMEOUT, then sends",
          "[clean][threads]") {
  Workspace workspace;
  const JobResult plain = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(join_waits), kDeadlockOptions,
                                                     {"join-correct", kLongComputation});
  CHECK(plain.out == "joined\n");
}

TEST_CASE("join_waits poll and timed: a main thread that sleeps in a loop cannot be proven held: a warning, no verdict",
          "[threads][no_progress][.slow]") {
  const std::string variant = GENERATE(as<std::string>{}, "poll", "timed");
  INFO("variant " << variant);
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 2, TEST_PROGRAM(join_waits),
                  {"--deadlock-timeout", kDeadlockTimeout, "--deadlock-warning", kDeadlockTimeout},
                  {variant, std::to_string(4 * kDeadlockTimeoutSeconds)});
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(result.out == "joined\n");
  CHECK(result.err.find("GLOBAL:DEADLOCK:HARD") == std::string::npos);
  CHECK(result.err.find("[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS") != std::string::npos);
  CHECK(result.err.find("the others sleep outside MPI in waits mpisentry cannot prove") != std::string::npos);
}

TEST_CASE("unreadable_chain: ranks wait through a wait mpisentry cannot read for a rank that computes: a warning",
          "[no_progress][.slow]") {
  if (!mpi_has("MPI_Barrier_init")) return;
  Workspace workspace;
  const JobResult result =
      run_checked(workspace, 3, TEST_PROGRAM(unreadable_chain),
                  {"--deadlock-timeout", kDeadlockTimeout, "--deadlock-warning", kDeadlockTimeout},
                  {std::to_string(4 * kDeadlockTimeoutSeconds)});
  INFO(describe(result));
  CHECK(result.succeeded());
  CHECK(result.out == "received 7\n");
  CHECK(result.err.find("GLOBAL:DEADLOCK:HARD") == std::string::npos);
  CHECK(result.err.find("[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS") != std::string::npos);
  CHECK(result.err.find("ranks 0,1 have been blocked in MPI for longer than DEADLOCK-WARNING and no deadlock can "
                        "be proven") != std::string::npos);
  // Once for the stall.
  const std::string warning = "[0] WARNING: GLOBAL:DEADLOCK:NO_PROGRESS: warning";
  CHECK(result.err.find(warning) == result.err.rfind(warning));
}
