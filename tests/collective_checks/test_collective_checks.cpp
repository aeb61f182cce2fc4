// GLOBAL:COLLECTIVE checks: each error of coll_mismatch is reported by the
// rank that sees it, naming the call, the ranks and both sides' values, and
// its correct twin of the same shape runs clean with every check on.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = with({"--check-all"}, kDeadlockOptions);
const std::vector<std::string> kCollectiveChecks = {"--check", "GLOBAL:COLLECTIVE:** ON"};

int ranks_for(const std::string& shape) {
  if (shape == "inter") return 4;
  return shape == "gatherv" || shape == "allgatherv" || shape == "alltoallv" || shape == "in_place" ? 3 : 2;
}

}  // namespace

TEST_CASE("coll_mismatch: each collective error is reported with the call, the ranks and both values",
          "[collectives]") {
  // shape, the finding's first line, what it says
  const auto [shape, headline, values] = GENERATE(table<std::string, std::string, std::string>({
      {"order", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Bcast\(root=0\), rank 1 calls MPI_Reduce\(op=MPI_SUM, root=0\)$)"},
      // Hangs on MPICH after the report: the deadlock checker ends it.
      {"operation", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Allgather, rank 1 calls MPI_Bcast\(root=0\)$)"},
      // Blocking and nonblocking forms never match.
      {"kinds", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Bcast\(root=0\), rank 1 calls MPI_Ibcast\(root=0\)$)"},
      // Rank 0 reports, and its record is pending in the hang: compared when
      // the deadlock monitor looks at the stuck ranks.
      {"kinds_reversed", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Iallreduce\(op=MPI_SUM\), rank 1 calls MPI_Allreduce\(op=MPI_SUM\)$)"},
      {"root", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:ROOT_MISMATCH: error$)",
       R"(rank 0 calls MPI_Bcast\(root=0\), rank 1 calls MPI_Bcast\(root=1\)$)"},
      {"reduction", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:REDUCTION_OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Allreduce\(op=MPI_SUM\), rank 1 calls MPI_Allreduce\(op=MPI_MAX\)$)"},
      {"gatherv", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:SIZE_MISMATCH: error$)",
       R"(rank 2 sends 12 bytes \(3 x MPI_INT\), rank 0 expects 16 bytes \(4 x MPI_INT\)$)"},
      {"allgatherv", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:SIZE_MISMATCH: error$)",
       R"(rank 2 sends 12 bytes \(3 x MPI_INT\), rank 0 expects 16 bytes \(4 x MPI_INT\)$)"},
      {"alltoallv", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:SIZE_MISMATCH: error$)",
       R"(rank 2 sends 12 bytes \(3 x MPI_INT\), rank 0 expects 16 bytes \(4 x MPI_INT\)$)"},
      {"datatype", R"(^\[1\] ERROR: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: error$)",
       R"(rank 0 sends 4 bytes \(1 x MPI_INT\), rank 1 expects 4 bytes \(1 x MPI_FLOAT\)$)"},
      // Pair types compare as their members: MPI_2INT as 2 MPI_INT, MPI_FLOAT_INT as {MPI_FLOAT, MPI_INT}.
      {"pairs", R"(^\[1\] ERROR: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: error$)",
       R"(rank 0 sends 16 bytes \(2 x MPI_2INT\), rank 1 expects 16 bytes \(4 x MPI_FLOAT\)$)"},
      {"float_int", R"(^\[1\] ERROR: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: error$)",
       R"(rank 0 sends 8 bytes \(1 x MPI_FLOAT_INT\), rank 1 expects 8 bytes \(2 x MPI_INT\)$)"},
      // Hangs on MPICH after the report: the deadlock checker ends it.
      {"comm_free", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:COMM_FREE_MISMATCH: error$)",
       R"(rank 0 calls MPI_Comm_free, rank 1 calls MPI_Bcast\(root=1\)$)"},
      // Compared after the calls, at the next collective.
      {"nonblocking", R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:REDUCTION_OPERATION_MISMATCH: error$)",
       R"(rank 0 calls MPI_Iallreduce\(op=MPI_SUM\), rank 1 calls MPI_Iallreduce\(op=MPI_MAX\)$)"},
  }));
  INFO("shape " << shape);
  Workspace workspace;
  const JobResult result = run_checked(workspace, ranks_for(shape), TEST_PROGRAM(coll_mismatch), kAllChecks, {shape});
  INFO(describe(result));
  // An error: CHECK-MAX-ERRORS 1 stops the job (or the deadlock checker does).
  CHECK_FALSE(result.timed_out);
  CHECK(result.failed());
  CHECK(result.elapsed_seconds < kDeadlockJobSeconds);
  check_reported(result, {headline, values});
  CHECK(count_occurrences(*result.report, "ERROR: GLOBAL:COLLECTIVE:") == 1);
}

TEST_CASE("coll_mismatch: the correct twins are not reported", "[collectives][clean]") {
  // Among them: v-collectives with other counts on each rank, a vector type
  // broadcast into a contiguous one of the same signature, MPI_2INT against
  // MPI_INT and MPI_FLOAT_INT against a struct of its members, MPI_Bcast_c
  // against MPI_Bcast, MPI_IN_PLACE, inter-communicator and neighbourhood
  // collectives.
  const std::string shape = GENERATE("operation_ok", "order_ok", "root_ok", "reduction_ok", "gatherv_ok",
                                     "allgatherv_ok", "alltoallv_ok", "datatype_ok", "pairs_ok", "float_int_ok",
                                     "comm_free_ok", "nonblocking_ok", "invalid_ok", "many_ok", "kinds_ok", "kinds_reversed_ok",
                                     "in_place_ok", "inter_ok");
  INFO("shape " << shape);
  if (shape == "kinds_ok" && !mpi_has("MPI_Bcast_c")) return;
  Workspace workspace;
  const std::string name = shape.substr(0, shape.size() - 3);
  const JobResult plain =
      check_unchanged_by_checker(workspace, ranks_for(name), TEST_PROGRAM(coll_mismatch), kAllChecks, {shape});
  CHECK(plain.out.find("done\n") != std::string::npos);
}

TEST_CASE("coll_mismatch: an invalid parameter is a GLOBAL:COLLECTIVE:INVALID_PARAMETER, then MPI's own error",
          "[collectives][invalid]") {
  const auto [argument, call, value, error] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"count", "MPI_Bcast", R"(count=-1$)", "MPI_ERR_COUNT"},
      {"root", "MPI_Bcast", R"(root=2, but the communicator has 2 ranks$)", "MPI_ERR_ROOT"},
      {"datatype", "MPI_Bcast", R"(datatype=MPI_DATATYPE_NULL$)", "MPI_ERR_TYPE"},
      {"comm", "MPI_Bcast", R"(comm=MPI_COMM_NULL$)", "MPI_ERR_COMM"},
      {"op", "MPI_Allreduce", R"(op=MPI_OP_NULL$)", "MPI_ERR_OP"},
  }));
  INFO("invalid " << argument);
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(coll_mismatch),
                                       with(kCollectiveChecks, {"--check-max-errors", "0"}), {"invalid", argument});
  INFO(describe(result));
  CHECK(result.succeeded());
  // Under MPI_ERRORS_RETURN the program sees what MPI returned.
  CHECK(result.out.find("rank 0: " + call + " returned " + error) != std::string::npos);
  CHECK(result.out.find("rank 1: " + call + " returned " + error) != std::string::npos);
  check_reported(result, {R"(^\[0\] ERROR: GLOBAL:COLLECTIVE:INVALID_PARAMETER: error$)",
                          R"(^\[1\] ERROR: GLOBAL:COLLECTIVE:INVALID_PARAMETER: error$)",
                          call + R"( got an invalid parameter: )" + value});
}

TEST_CASE("coll_mismatch: under MPI_ERRORS_ARE_FATAL the INVALID_PARAMETER is on disk before MPI aborts",
          "[collectives][invalid]") {
  Workspace workspace;
  const JobResult result = run_checked(workspace, 2, TEST_PROGRAM(coll_mismatch), kAllChecks, {"invalid_fatal"});
  INFO(describe(result));
  CHECK(result.failed());
  REQUIRE(result.report.has_value());
  // MPI's handler ended the job inside the call: the checker's limit, after the call, never came.
  CHECK(result.report->find("limit CHECK-MAX-ERRORS reached") == std::string::npos);
  CHECK(any_line_matches(*result.report, R"(^\[[01]\] ERROR: GLOBAL:COLLECTIVE:INVALID_PARAMETER: error$)"));
  CHECK(any_line_matches(*result.report, R"(MPI_Bcast got an invalid parameter: count=-1$)"));
}

TEST_CASE("coll_mismatch: 10,000 mismatches are counted past CHECK-MAX-REPORTS, and CHECK-MAX-ERRORS stops the job",
          "[collectives][limits]") {
  const Program program = TEST_PROGRAM(coll_mismatch);
  Workspace workspace;
  SECTION("CHECK-MAX-ERRORS 0, CHECK-MAX-REPORTS 3") {
    const JobResult result =
        run_checked(workspace, 2, program, with(kAllChecks, {"--check-max-errors", "0", "--check-max-reports", "3"}),
                    {"many"});
    INFO(describe(result));
    CHECK(result.succeeded());
    CHECK(result.out == "done\n");
    REQUIRE(result.report.has_value());
    CHECK(count_occurrences(*result.report, "] ERROR: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: error\n") == 3);
    CHECK(result.report->find("[0] INFO: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: found 10000 times (10000 errors + 0 "
                              "warnings), 9997 reports were suppressed\n") != std::string::npos);
  }
  SECTION("CHECK-MAX-ERRORS 1, the default") {
    const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"many"});
    INFO(describe(result));
    CHECK(result.failed());
    CHECK(result.out.find("done") == std::string::npos);
    REQUIRE(result.report.has_value());
    CHECK(count_occurrences(*result.report, "] ERROR: GLOBAL:COLLECTIVE:DATATYPE:MISMATCH: error\n") == 1);
    CHECK(result.report->find("limit CHECK-MAX-ERRORS reached => aborting") != std::string::npos);
  }
}
