// GLOBAL:RMA:CONFLICT: two accesses to the same bytes of a window in one
// fence epoch, where MPI leaves the outcome undefined, are reported by
// the target, naming both; reads against reads, accumulates against
// accumulates, disjoint bytes, accesses in different epochs and accesses
// ordered by exclusive locks are not, and leave the program unchanged;
// interleaved bytes (a target datatype with gaps) are said to be not judged.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "rma_cases.hpp"

using namespace harness;

TEST_CASE("rma_conflicts: conflicting accesses in one fence epoch are GLOBAL:RMA:CONFLICT", "[rma][memory]") {
  // mode, the summary's accesses, the second party's call
  const auto [mode, summary, second_call] = GENERATE(table<std::string, std::string, std::string>({
      {"put_put", "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
       R"(MPI_Put\(target_rank=1, target_disp=2, target_count=4\))"},
      {"put_get", "rank 0's MPI_Put writes bytes 8 to 15 of rank 1's window memory, which rank 2's MPI_Get reads",
       R"(MPI_Get\(target_rank=1, target_disp=2, target_count=4\))"},
      {"acc_get",
       "rank 0's MPI_Accumulate updates bytes 0 to 15 of rank 1's window memory, which rank 2's MPI_Get reads",
       R"(MPI_Get\(target_rank=1, target_disp=0, target_count=4\))"},
      {"own_get", "rank 0's MPI_Get reads bytes 8 to 15 of rank 1's window memory, which rank 1's own MPI_Get writes",
       R"(MPI_Get\(origin_addr=0x[0-9a-f]+, origin_count=4\) in its own window)"},
  }));
  const Program program = TEST_PROGRAM(rma_conflicts);
  std::vector<std::string> patterns = {
      summary + R"(, and nothing orders the two: both in one fence epoch \(between the window's fences 1 and 2\)\.)",
      second_call};
  if (mode == "own_get") patterns.push_back(frame_pattern("main", program.source, marked_line(program, "own_get")));
  check_rma_conflict(program, mode, patterns);
}

TEST_CASE("rma_conflicts: reads, accumulates, disjoint bytes, other epochs and locked epochs are not reported",
          "[rma][memory][clean]") {
  const std::string mode = GENERATE("halves", "get_get", "acc_acc", "epochs", "locks", "vectors", "own_halves");
  // A vector target datatype has gaps: its accesses are not judged, and the run says so.
  check_rma_twin(TEST_PROGRAM(rma_conflicts), mode,
                 mode == "vectors" ? "GLOBAL:RMA:CONFLICT did not judge accesses whose target datatype has gaps" : "");
}
