// GLOBAL:RMA:CONFLICT over more of MPI's one-sided interface: allocated,
// shared-memory, dynamic and split-communicator windows, flushes that
// complete only at the origin, exclusive locks against shared ones and the
// target's own calls, exposures matched in order or ended by MPI_Win_test,
// accumulates with MPI_REPLACE, MPI_NO_OP, compare-and-swap and derived
// datatypes, request-based accumulates, and orders made or not made by
// point-to-point messages, barriers and threads. Each racy case is reported
// by its target with both calls, their places and why nothing ordered them;
// each correct twin is not, and runs as without the checker. The cases of
// rma_corpus.c that the checker misses or reports wrongly today are left out.
#include <catch2/catch.hpp>

#include "report_text.hpp"
#include "rma_cases.hpp"

using namespace harness;

namespace {

// The ends of the report's summary sentence: why nothing orders the two.
const std::string kShared =
    ", and nothing orders the two: both in shared lock epochs, and each was called before the other was completed, "
    "with no exclusive lock between them.";
const std::string kOneProcess =
    ", and nothing orders the two: both in one epoch of one process, with no synchronization of the target between.";
const std::string kFence =
    ", and nothing orders the two: both in one fence epoch (between the window's fences 1 and 2).";
std::string exposure(int number) {
  return ", and nothing orders the two: both in the target's exposure epoch " + std::to_string(number) +
         " (one MPI_Win_post ... MPI_Win_wait).";
}

// The summary as a regex: `accesses` (with `bytes` for "bytes 8 to 23") and the reason, as written.
std::string summary(const std::string& accesses, const std::string& reason, const std::string& bytes = "") {
  const std::size_t at = bytes.empty() ? std::string::npos : accesses.find(bytes);
  if (at == std::string::npos) return regex_escape(accesses + reason);
  return regex_escape(accesses.substr(0, at)) + "bytes [0-9]+ to [0-9]+" +
         regex_escape(accesses.substr(at + bytes.size()) + reason);
}

}  // namespace

TEST_CASE("rma_corpus: more conflicting one-sided accesses are GLOBAL:RMA:CONFLICT", "[rma][memory]") {
  // case, the summary (a regex), the marked calls of the two parties (one when both are the same), how many
  // conflicts rank 1 reports
  const auto [mode, sentence, first_mark, second_mark, reports] =
      GENERATE(table<std::string, std::string, std::string, std::string, std::size_t>({
          // conflict
          {"alloc_put_put",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kShared),
           "put_call", "", 1},
          {"shm_put_get",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          {"dynamic_put_put",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kShared, "bytes 8 to 23"),
           "put_call", "", 1},
          {"overlap_one",
           summary("rank 0's MPI_Put writes bytes 16 to 19 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          {"contig_put",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kShared),
           "put_call", "", 1},
          {"own_source",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 1's own MPI_Put reads",
                   kShared),
           "put_call", "own_put", 1},
          {"split_put_get",
           summary("rank 2's MPI_Get reads bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   kShared),
           "put_call", "get_call", 1},
          // synchronization
          {"fence_asserts",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kFence),
           "put_call", "", 1},
          {"flush_local",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   kOneProcess),
           "put_call", "", 1},
          {"flush_local_all",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   kOneProcess),
           "put_call", "", 1},
          {"rput_wait",
           summary("rank 0's MPI_Rput writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   kOneProcess),
           "rput_call", "put_call", 1},
          {"lock_all_shared",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          {"third_excl",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kShared),
           "put_call", "", 1},
          {"excl_own",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 1's own MPI_Get writes",
                   ", and nothing orders the two: one in an exclusive lock epoch, the other in a shared lock epoch, "
                   "and each was called before the other was completed, with no exclusive lock between them."),
           "put_call", "own_get", 1},
          // Three ranks, three pairs: 0 and 1, 0 and 2, 1 and 2.
          {"lock_all_three",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   kShared),
           "put_call", "", 3},
          {"pscw_put_acc",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Accumulate "
                   "updates",
                   exposure(1)),
           "put_call", "accumulate", 1},
          {"pscw_later",
           summary("rank 0's MPI_Put writes bytes 32 to 47 of rank 1's window memory, which rank 2's MPI_Put writes",
                   exposure(2)),
           "put_call", "", 1},
          {"pscw_test",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put writes",
                   exposure(1)),
           "put_call", "", 1},
          {"split_pscw",
           summary("rank 2's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   exposure(1)),
           "put_call", "", 1},
          // atomic
          {"fetch_no_op_put",
           summary("rank 2's MPI_Put writes bytes 12 to 15 of rank 1's window memory, which rank 0's "
                   "MPI_Fetch_and_op reads (atomically)",
                   kShared),
           "put_call", "fetch_no_op", 1},
          {"swap_acc",
           summary("rank 2's MPI_Accumulate updates bytes 12 to 15 of rank 1's window memory, which rank 0's "
                   "MPI_Compare_and_swap updates",
                   kShared),
           "accumulate", "swap", 1},
          {"replace_put",
           summary("rank 0's MPI_Accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Put "
                   "writes",
                   kShared),
           "accumulate", "put_call", 1},
          {"racc_rget",
           summary("rank 0's MPI_Raccumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Rget "
                   "reads",
                   kShared),
           "raccumulate", "rget_call", 1},
          {"rget_acc_ops",
           summary("rank 0's MPI_Rget_accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's "
                   "MPI_Rget_accumulate updates",
                   kShared),
           "rget_acc", "", 1},
          {"acc_contig_ops",
           summary("rank 0's MPI_Accumulate updates bytes 8 to 23 of rank 1's window memory, which rank 2's "
                   "MPI_Accumulate updates",
                   kShared),
           "accumulate", "", 1},
          // hybrid
          {"p2p_early",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          {"relay_early",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          {"flush_local_barrier",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 2's MPI_Get reads",
                   kShared),
           "put_call", "get_call", 1},
          // The two threads' calls come in either order.
          {"thread_acc_put",
           "rank 0's MPI_(Put writes|Accumulate updates) bytes 8 to 23 of rank 1's window memory, which rank 0's "
           "MPI_(Accumulate updates|Put writes)" +
               regex_escape(kOneProcess),
           "put_call", "accumulate", 1},
          {"thread_join",
           summary("rank 0's MPI_Put writes bytes 8 to 23 of rank 1's window memory, which rank 0's MPI_Put writes",
                   kOneProcess),
           "put_call", "", 1},
      }));
  const Program program = TEST_PROGRAM(rma_corpus);
  std::vector<std::string> patterns = {sentence};
  for (const std::string& mark : {first_mark, second_mark})
    if (!mark.empty()) patterns.push_back(frame_pattern("do_access", program.source, marked_line(program, mark)));
  check_rma_conflict(program, mode, patterns, reports);
}

TEST_CASE("rma_corpus: the correct twins are not reported and run as without the checker", "[rma][memory][clean]") {
  const std::string mode = GENERATE(
      // conflict
      "alloc_halves", "shm_apart", "dynamic_halves", "adjacent", "contig_halves", "own_source_apart", "split_apart",
      "two_windows",
      // synchronization
      "fence_asserts_epochs", "flush_all", "flush_lock_all", "rput_flush", "excl_lock_all", "excl_shared",
      "excl_own_apart", "third_excl_halves", "lock_all_thirds", "pscw_acc_acc", "pscw_earlier", "pscw_test_epochs",
      "split_pscw_earlier",
      // atomic
      "fetch_no_op_acc", "swap_no_op", "replace_replace", "racc_racc", "rget_acc_same", "acc_contig",
      // hybrid
      "p2p_after_unlock", "relay_after_unlock", "flush_barrier", "thread_acc_acc", "thread_flush");
  check_rma_twin(TEST_PROGRAM(rma_corpus), mode);
}
