// LOCAL:PARTITION:*: a partition readied twice in one start (MPI_Pready,
// _range, _list), a partition outside the request's, MPI_Pready before
// MPI_Start and MPI_Precv_init from MPI_ANY_SOURCE are reported before the
// call, with the call and its place, and the call is then made (MPICH
// aborts on each: the report is in the report file first); each partition readied once per
// start, by any of the three calls, or written before it is readied, is not
// reported and runs as without the checker; the buffer written after the
// last partition was readied is LOCAL:MEMORY:ILLEGAL_MODIFICATION.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

TEST_CASE("partitions: misused partitioned communication is LOCAL:PARTITION", "[partitions]") {
  // case, reporting rank, check, summary, marked line
  const auto [mode, rank, check, summary, mark] =
      GENERATE(table<std::string, int, std::string, std::string, std::string>({
          {"double", 0, "DOUBLE_READY", "MPI_Pready readies partition 2 a second time in one start", "ready_twice"},
          {"range_double", 0, "DOUBLE_READY", "MPI_Pready_range readies partition 2 a second time in one start",
           "range_second"},
          {"list_double", 0, "DOUBLE_READY", "MPI_Pready_list readies partition 1 a second time in one start",
           "list_twice"},
          {"invalid", 0, "INVALID", R"(MPI_Pready readies partition 4 of a partitioned send of 4 partitions \(0 to 3\))",
           "ready_outside"},
          {"arrived_invalid", 1, "INVALID",
           R"(MPI_Parrived asks for partition -1 of a partitioned receive of 4 partitions \(0 to 3\))",
           "arrived_outside"},
          {"inactive", 0, "INACTIVE", "MPI_Pready on a partitioned send that was never started", "ready_inactive"},
          {"wildcard", 1, "WILDCARD", "MPI_Precv_init with MPI_ANY_SOURCE: partitioned communication", "precv"},
      }));
  INFO("case " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(partitions);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  // MPICH aborts the job in the call, and mpiexec may drop the last of the
  // ranks' output as it kills them: the report file has the report.
  INFO(describe(result));
  REQUIRE(result.report.has_value());
  for (const std::string& pattern :
       {R"(^\[)" + std::to_string(rank) + R"(\] ERROR: LOCAL:PARTITION:)" + check + ": error$", summary,
        frame_pattern("", program.source, marked_line(program, mark))}) {
    INFO("pattern: " << pattern);
    CHECK(any_line_matches(*result.report, pattern));
  }
  CHECK(count_occurrences(*result.report, "LOCAL:PARTITION:" + check + ": error") == 1u);
}

TEST_CASE("partitions: a partitioned send's buffer written after its last partition was readied is "
          "LOCAL:MEMORY:ILLEGAL_MODIFICATION",
          "[partitions][memory]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(partitions);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"written"});
  CHECK(result.succeeded());
  check_reported(result, {R"(^\[0\] ERROR: LOCAL:MEMORY:ILLEGAL_MODIFICATION: error$)",
                          R"(The send buffer of MPI_Psend_init was written while MPI owned it: its bytes when MPI_Wait )"
                          R"(completed the operation differ from its bytes when it started \(the MPI_Pready of the last )"
                          R"(partition of MPI_Psend_init\))",
                          frame_pattern("main", program.source, marked_line(program, "send_wait")),
                          frame_pattern("main", program.source, marked_line(program, "psend"))});
}

TEST_CASE("partitions: each partition readied once per start, or written before it is readied, is not reported",
          "[partitions][clean]") {
  const std::string mode = GENERATE("ready", "range", "list", "rounds", "filled", "repartitioned");
  INFO("case " << mode);
  Workspace workspace;
  const JobResult result = check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(partitions), kAllChecks, {mode});
  INFO(describe(result));
  CHECK(result.err.find("LOCAL:PARTITION") == std::string::npos);
  CHECK(result.err.find("] ERROR:") == std::string::npos);
}
