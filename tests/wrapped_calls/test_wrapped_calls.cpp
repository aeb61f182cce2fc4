// Calls beyond point-to-point and the classic collectives: collective
// MPI-IO and large-count collectives hang as deadlocks that are reported,
// their correct twins of the same shape are not, and null handles get MPI's
// own errors.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

TEST_CASE("file_collective: rank 0 in MPI_File_write_all, rank 1 in MPI_Recv from rank 0", "[wrapped][deadlock]") {
  Workspace workspace;
  const Program program = TEST_PROGRAM(file_collective);
  // A verdict through a possible wait: HARD only after an explicit timeout.
  const JobResult result = run_checked(workspace, 2, program, kTimedDeadlockOptions, {"0", "deadlock"});
  if (MPISENTRY_BUILT_FOR_OPEN_MPI) {
    // Open MPI's MPI_File_write_all (OMPIO) returns without rank 1: no hang, and nothing to report.
    check_clean_run(result, workspace);
    return;
  }
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_File_write_all\(fh=0x[0-9a-f]+ \(the file MPI_File_open #1 of MPI_COMM_WORLD\), buf=.*, count=1024, datatype=MPI_INT\))"},
                            {1, R"(MPI_Recv\(.*source=0\b)"}},
                  .blocking_functions = {"write_block", "wait_for_rank_0"}});
  const std::string report = result.report.value_or("");
  // The write waits for rank 1 only where MPI makes it synchronize: the
  // verdict names that possible wait.
  CHECK(report.find("rank 0's MPI_File_write_all waits for rank 1 only where MPI_File_write_all synchronizes") !=
        std::string::npos);
}

TEST_CASE("file_collective: rank 1 computes before it joins MPI_File_write_all", "[wrapped][clean]") {
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(file_collective), kTimedDeadlockOptions, {kTimedComputation, "correct"});
  CHECK(plain.out == "rank 0 read back 1023\n");
}

TEST_CASE("large_count: each rank calls a 4 MiB MPI_Bcast_c naming itself as root", "[wrapped][deadlock]") {
  if (!mpi_has("MPI_Bcast_c")) return;
  Workspace workspace;
  const Program program = TEST_PROGRAM(large_count);
  const JobResult result = run_checked(workspace, 2, program, kDeadlockOptions, {"0", "roots"});
  check_deadlock(result, program,
                 {.calls = {{0, R"(MPI_Bcast_c\(.*count=1048576, datatype=MPI_INT, root=0, comm=MPI_COMM_WORLD\))"},
                            {1, R"(MPI_Bcast_c\(.*count=1048576, datatype=MPI_INT, root=1, comm=MPI_COMM_WORLD\))"}},
                  .blocking_functions = {"broadcast"}});
  CHECK(any_line_matches(result.report.value_or(""),
                         R"(rank \d is in MPI_Bcast_c with root \d and rank \d in MPI_Bcast_c with root \d, as collective #1)"));
}

TEST_CASE("large_count: rank 1 computes before MPI_Bcast_c and MPI_Allreduce_c", "[wrapped][clean]") {
  if (!mpi_has("MPI_Bcast_c and MPI_Allreduce_c")) return;
  Workspace workspace;
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(large_count), kDeadlockOptions, {kLongComputation, "correct"});
  CHECK(plain.out == "broadcast 1, sum 2\n");
}

TEST_CASE("bad_handles: MPI_COMM_NULL and MPI_FILE_NULL get MPI's own errors", "[wrapped][clean]") {
  if (!mpi_has("MPI_Bcast_c, MPI_Allreduce_c and MPI_Sendrecv_replace_c")) return;
  Workspace workspace;
  // Erroneous on purpose: LOCAL:ARGUMENT reports them (tests/arguments), off here, where MPI's own errors count.
  const JobResult plain =
      check_unchanged_by_checker(workspace, 2, TEST_PROGRAM(bad_handles), with(kDeadlockOptions, kArgumentChecksOff));
  CHECK(plain.out.find("MPI_Bcast_c on MPI_COMM_NULL: MPI_ERR_COMM\n") != std::string::npos);
  CHECK(plain.out.find("MPI_File_write_all on MPI_FILE_NULL: MPI_ERR_FILE\n") != std::string::npos);
}
