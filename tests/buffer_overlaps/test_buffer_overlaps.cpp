// LOCAL:MEMORY:OVERLAP: an operation that uses bytes of a pending
// operation's buffer where MPI forbids it is reported on its rank, naming
// both operations and where the pending one started; two sends from one
// buffer, two receives into disjoint halves or interleaved vectors, a send
// after the wait and two puts from one buffer are not, and leave the
// program unchanged.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// Every check on, and the job not ended at the first error, so that the
// program's own output is compared too.
const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

TEST_CASE("buffer_overlaps: a pending operation's bytes used by another where MPI forbids it are "
          "LOCAL:MEMORY:OVERLAP",
          "[memory]") {
  // mode, the rank that reports, the summary, the earlier call's function and mark
  const auto [mode, rank, summary, function, mark] =
      GENERATE(table<std::string, std::string, std::string, std::string, std::string>({
          {"irecv_irecv", "1", "MPI_Irecv writes 32 bytes at 0x[0-9a-f]+ that MPI_Irecv, still pending, writes\\.",
           "two_receives", "first_irecv"},
          {"irecv_straddle", "1", "MPI_Irecv writes 8 bytes at 0x[0-9a-f]+ that MPI_Irecv, still pending, writes\\.",
           "two_receives", "first_irecv"},
          {"irecv_long", "1", "MPI_Irecv writes 32 bytes at 0x[0-9a-f]+ that MPI_Irecv, still pending, writes\\.",
           "two_receives", "first_irecv"},
          {"irecv_send", "1", "MPI_Send reads 32 bytes at 0x[0-9a-f]+ that MPI_Irecv, still pending, writes\\.",
           "pending_and_other", "irecv"},
          {"isend_recv", "1", "MPI_Recv writes 32 bytes at 0x[0-9a-f]+ that MPI_Isend, still pending, reads\\.",
           "pending_and_other", "isend"},
          {"get_get", "0", "MPI_Get writes 32 bytes at 0x[0-9a-f]+ that MPI_Get, still pending, writes\\.",
           "one_sided", "get"},
          {"get_put", "0", "MPI_Put reads 32 bytes at 0x[0-9a-f]+ that MPI_Get, still pending, writes\\.",
           "one_sided", "get"},
      }));
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_overlaps);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  CHECK(result.succeeded());
  check_reported(result, {"^\\[" + rank + "\\] ERROR: LOCAL:MEMORY:OVERLAP: error$", summary,
                          "MPI owns the buffer of a pending operation until the call that completes it returns",
                          "started earlier, (reads|writes) them:",
                          frame_pattern(function, program.source, marked_line(program, mark))});
  CHECK(count_occurrences(result.err, "LOCAL:MEMORY:OVERLAP: error") == 1u);
}

TEST_CASE("buffer_overlaps: a buffer over a pending write and a pending read in two tables names the write",
          "[memory]") {
  // The pending Isend's bytes lie before each 64 KiB boundary, the pending
  // Irecv's after it: their tables' shards come in either order, and the
  // pending write is named at every boundary.
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_overlaps);
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {"irecv_over_both"});
  CHECK(result.succeeded());
  check_reported(result, {"^\\[1\\] ERROR: LOCAL:MEMORY:OVERLAP: error$",
                          "MPI_Irecv writes 16 bytes at 0x[0-9a-f]+ that MPI_Irecv, still pending, writes\\.",
                          frame_pattern("over_both", program.source, marked_line(program, "pending_irecv"))});
  CHECK(count_occurrences(result.err, "LOCAL:MEMORY:OVERLAP: error") == 8u);
  CHECK(count_occurrences(result.err, "that MPI_Irecv, still pending, writes.") == 8u);
  CHECK(result.err.find("that MPI_Isend, still pending") == std::string::npos);
}

TEST_CASE("buffer_overlaps: two sends from one buffer, disjoint or interleaved receives and uses after completion "
          "are not reported",
          "[memory][clean]") {
  const std::string mode =
      GENERATE("isend_isend", "irecv_halves", "vectors", "send_after_wait", "put_put", "put_after_fence");
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(buffer_overlaps);
  const JobResult plain = check_unchanged_by_checker(workspace, 2, program, kAllChecks, {mode});
  CHECK(plain.out == "buffer_overlaps " + mode + ": data as sent\n");
  const JobResult result = run_checked(workspace, 2, program, kAllChecks, {mode});
  INFO(describe(result));
  CHECK(result.err.find("OVERLAP") == std::string::npos);
  CHECK(result.err.find("] ERROR:") == std::string::npos);
}
