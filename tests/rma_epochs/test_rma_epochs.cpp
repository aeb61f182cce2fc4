// GLOBAL:RMA:CONFLICT beyond fences: conflicting accesses in shared lock,
// lock_all and post/start/complete/wait epochs, with request-based and
// atomic operations and two threads, are reported by the target with both
// sides' calls and the rule that left them unordered; each correct twin
// (disjoint bytes, a barrier or a flush between, exposures one after the
// other, accumulates MPI allows together) is not, and runs as without the
// checker.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "rma_cases.hpp"

using namespace harness;

TEST_CASE("rma_epochs: conflicting accesses in lock and PSCW epochs are GLOBAL:RMA:CONFLICT", "[rma][memory]") {
  // case, the summary's words, rank 0's marked call (the target shows its place) and its function
  const auto [mode, summary, mark, function] = GENERATE(table<std::string, std::string, std::string, std::string>({
      {"shared_put_put",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes, and nothing "
       "orders the two: both in shared lock epochs, and each was called before the other was completed",
       "put_put_call", "put_put"},
      {"lock_all_put_get",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads", "put_get_put",
       "put_get"},
      {"acc_put",
       "rank 0's MPI_Accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
       "acc_put_acc", "acc_put"},
      {"acc_ops",
       "rank 0's MPI_Accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Accumulate updates",
       "acc_ops_acc", "acc_ops"},
      {"acc_types",
       "rank 0's MPI_Accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Accumulate updates",
       "acc_types_acc", "acc_types"},
      {"fetch_put",
       "rank 2's MPI_Put writes bytes 12 to 15 of rank 1's window memory, which rank 0's MPI_Fetch_and_op updates",
       "fetch", "fetch_put"},
      {"swap_put",
       "rank 2's MPI_Put writes bytes 12 to 15 of rank 1's window memory, which rank 0's MPI_Compare_and_swap updates",
       "swap", "swap_put"},
      {"get_acc_put",
       "rank 0's MPI_Get_accumulate reads \\(atomically\\) bytes 8 to 23 of rank 1's window memory, which rank 2's "
       "MPI_Put writes",
       "get_acc", "get_acc_put"},
      {"rput_rput", "rank 0's MPI_Rput writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Rput writes",
       "rput", "rput_rput"},
      {"rget_put", "rank 0's MPI_Rget reads bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
       "rget", "rget_put"},
      {"pscw_put_put",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes, and nothing "
       "orders the two: both in the target's exposure epoch 1 \\(one MPI_Win_post ... MPI_Win_wait\\)",
       "put_put_call", "put_put"},
      {"pscw_put_get", "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
       "put_get_put", "put_get"},
      {"pscw_own",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 1's own MPI_Get writes, and "
       "nothing orders the two: one in an MPI_Win_start epoch, the other in a shared lock epoch",
       "pscw_own_put", "pscw_own"},
      {"same_origin",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes, and nothing "
       "orders the two: both in one epoch of one process",
       "same_origin_put", "main"},
      {"threads",
       "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes, and nothing "
       "orders the two: both in one epoch of one process",
       "", ""},
      {"lock_own", "rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 1's own MPI_Get writes",
       "lock_own_put", "lock_own"},
  }));
  const Program program = TEST_PROGRAM(rma_epochs);
  std::vector<std::string> patterns = {summary};
  if (!mark.empty()) patterns.push_back(frame_pattern(function, program.source, marked_line(program, mark)));
  check_rma_conflict(program, mode, patterns);
}

TEST_CASE("rma_epochs: the correct twins are not reported and run as without the checker", "[rma][memory][clean]") {
  const std::string mode =
      GENERATE("shared_halves", "lock_all_barrier", "acc_acc", "acc_no_op", "acc_same_type", "fetch_fetch", "swap_swap",
               "get_get_acc", "rput_halves", "rget_rget", "pscw_epochs", "pscw_get_get", "pscw_own_apart", "flushed",
               "thread_halves", "lock_own_apart");
  check_rma_twin(TEST_PROGRAM(rma_epochs), mode);
}
