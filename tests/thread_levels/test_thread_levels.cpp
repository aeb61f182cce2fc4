// LOCAL:THREAD:*: a second thread calling MPI at MPI_THREAD_SINGLE or
// MPI_THREAD_FUNNELED is NOT_MAIN, and a call while another thread is inside
// MPI at MPI_THREAD_SERIALIZED is CONCURRENT, each reported once with the
// calling thread's stack; the same work done in turns, or by the main thread,
// is not reported and runs as without the checker.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

TEST_CASE("thread_levels: MPI called from threads the thread level does not allow is LOCAL:THREAD", "[threads]") {
  // case, check, summary
  const auto [mode, check, summary] = GENERATE(table<std::string, std::string, std::string>({
      {"single_worker", "NOT_MAIN",
       R"(Thread 1 \(kernel thread id [0-9]+\) calls MPI at MPI_THREAD_SINGLE, where only the thread that initialized )"
       R"(MPI \(kernel thread id [0-9]+\) may call it \(MPI 4.1, section 11.6.3\)\.)"},
      {"funneled_worker", "NOT_MAIN", R"(calls MPI at MPI_THREAD_FUNNELED, where only the thread that initialized)"},
      {"serialized_overlap", "CONCURRENT",
       R"(Kernel thread [0-9]+ calls MPI while 1 other thread is inside an MPI call, at MPI_THREAD_SERIALIZED, where )"
       R"(the program must make sure that no two threads call MPI at once)"},
  }));
  INFO("case " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(thread_levels);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  // MPICH takes no locks below MPI_THREAD_MULTIPLE: two threads inside it at
  // once may end the job as they do without the checker, in any way.
  REQUIRE_FALSE(result.timed_out);
  if (check != "CONCURRENT") CHECK(result.succeeded());
  check_reported(result, {R"(^\[0\] ERROR: LOCAL:THREAD:)" + check + ": error$", summary,
                          frame_pattern("send_value", program.source, marked_line(program, "send"))});
  CHECK(count_occurrences(result.err, "LOCAL:THREAD:" + check + ": error") == 1u);
}

TEST_CASE("thread_levels: threads that call MPI as their level allows are not reported", "[threads][clean]") {
  const std::string mode = GENERATE("funneled_main", "serialized_turns");
  INFO("case " << mode);
  Workspace workspace;
  const JobResult result = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(thread_levels), kAllChecks, {mode});
  INFO(describe(result));
}

TEST_CASE("thread_levels: a request that two threads complete at once is LOCAL:THREAD:CONCURRENT_REQUEST",
          "[threads]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(shared_request);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"shared"});
  INFO(describe(result));
  REQUIRE_FALSE(result.timed_out);
  CHECK(result.succeeded());
  check_reported(result, {R"(^\[0\] ERROR: LOCAL:THREAD:CONCURRENT_REQUEST: error$)",
                          R"(Kernel thread [0-9]+ calls MPI_Test on request 0x[0-9a-f]+, which kernel thread [0-9]+ is )"
                          R"(completing in MPI_Wait at the same time)",
                          frame_pattern("thread_main", program.source, marked_line(program, "test"))});
  CHECK(count_occurrences(*result.report, "LOCAL:THREAD:CONCURRENT_REQUEST: error") == 1u);
}

TEST_CASE("thread_levels: threads that complete their own requests are not reported", "[threads][clean]") {
  const std::string mode = GENERATE("own", "reused");
  INFO("case " << mode);
  Workspace workspace;
  const JobResult result = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(shared_request), kAllChecks, {mode});
  INFO(describe(result));
  CHECK(result.out.find(mode == "own" ? "own: 1 and 1 in order" : "reused: 2000 and 2000 in order") !=
        std::string::npos);
}
