// GLOBAL:RMA:CONFLICT: two accesses to the same bytes of a window in one
// fence epoch, where MPI leaves the outcome undefined, are reported by
// the target, naming both; reads against reads, accumulates against
// accumulates, disjoint bytes, accesses in different epochs and accesses
// ordered by exclusive locks are not, and leave the program unchanged;
// interleaved bytes (a target datatype with gaps) are said to be not judged.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

const std::vector<std::string> kAllChecks = {"--check-all", "--check-max-errors", "0"};

}  // namespace

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
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(rma_conflicts);
  const JobResult result = run_checked(workspace, 3, program, kAllChecks, {mode});
  CHECK(result.succeeded());
  std::vector<std::string> patterns = {
      R"(^\[1\] ERROR: GLOBAL:RMA:CONFLICT: error$)",
      summary + R"(, and nothing orders the two: both in one fence epoch \(between the window's fences 1 and 2\)\.)",
      "MPI leaves undefined the bytes, or the data read, where two accesses", second_call};
  if (mode == "own_get") patterns.push_back(frame_pattern("main", program.source, marked_line(program, "own_get")));
  check_reported(result, patterns);
  CHECK(count_occurrences(result.err, "GLOBAL:RMA:CONFLICT: error") == 1u);
}

TEST_CASE("rma_conflicts: reads, accumulates, disjoint bytes, other epochs and locked epochs are not reported",
          "[rma][memory][clean]") {
  const std::string mode = GENERATE("halves", "get_get", "acc_acc", "epochs", "locks", "vectors", "own_halves");
  INFO("mode " << mode);
  Workspace workspace;
  const Program program = TEST_PROGRAM(rma_conflicts);
  check_unchanged_by_checker(workspace, 3, program, kAllChecks, {mode});
  const JobResult result = run_checked(workspace, 3, program, kAllChecks, {mode});
  INFO(describe(result));
  CHECK(result.err.find("GLOBAL:RMA:CONFLICT: error") == std::string::npos);
  CHECK(result.err.find("] ERROR:") == std::string::npos);
  // A vector target datatype has gaps: its accesses are not judged, and the run says so.
  CHECK((result.err.find("GLOBAL:RMA:CONFLICT did not judge accesses whose target datatype has gaps") !=
         std::string::npos) == (mode == "vectors"));
}
