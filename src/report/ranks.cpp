// Rank lists and rank classes: what keeps a report of a thousand ranks short.
#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_set>

#include <fmt/format.h>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

bool frame_less(const Frame& a, const Frame& b) {
  return std::tie(a.function, a.file, a.line, a.module) < std::tie(b.function, b.file, b.line, b.module);
}

bool thread_less(const ThreadSnapshot& a, const ThreadSnapshot& b) {
  if (a.id != b.id) return a.id < b.id;
  if (a.state != b.state) return a.state < b.state;
  if (a.function != b.function) return a.function < b.function;
  return std::lexicographical_compare(a.stack.begin(), a.stack.end(), b.stack.begin(), b.stack.end(), frame_less);
}

// Orders snapshots by what a class shares: the rank's state and exit status,
// and each thread's id, state, function and stack.
struct SameClassLess {
  bool operator()(const RankSnapshot* a, const RankSnapshot* b) const {
    if (a->state != b->state) return a->state < b->state;
    if (a->exit_status != b->exit_status) return a->exit_status < b->exit_status;
    return std::lexicographical_compare(a->threads.begin(), a->threads.end(), b->threads.begin(), b->threads.end(),
                                        thread_less);
  }
};

// Equivalent under SameClassLess, tested in one pass of equality.
bool same_class(const RankSnapshot& a, const RankSnapshot& b) {
  return a.state == b.state && a.exit_status == b.exit_status &&
         std::equal(a.threads.begin(), a.threads.end(), b.threads.begin(), b.threads.end(),
                    [](const ThreadSnapshot& x, const ThreadSnapshot& y) {
                      return x.id == y.id && x.state == y.state && x.function == y.function && x.stack == y.stack;
                    });
}

}  // namespace

const RankSnapshot* find_rank(const std::vector<RankSnapshot>& ranks, int rank) {
  // A report's ranks are one per rank, sorted: rank r at index r, found at
  // once (the DOT graph asks once per arc); any other list is searched.
  const auto at = static_cast<std::size_t>(rank);
  if (rank >= 0 && at < ranks.size() && ranks[at].rank == rank) return &ranks[at];
  const auto found = std::find_if(ranks.begin(), ranks.end(),
                                  [&](const RankSnapshot& snapshot) { return snapshot.rank == rank; });
  return found == ranks.end() ? nullptr : &*found;
}

const ThreadSnapshot* find_thread(const RankSnapshot& rank, int id) {
  const auto found = std::find_if(rank.threads.begin(), rank.threads.end(),
                                  [&](const ThreadSnapshot& thread) { return thread.id == id; });
  return found == rank.threads.end() ? nullptr : &*found;
}

std::string compress_ranks(const std::vector<int>& ranks) { return to_string(RankSet(ranks)); }

std::vector<RankClass> merge_stacks(const std::vector<RankSnapshot>& ranks, const DeadlockCore& core) {
  std::vector<const RankSnapshot*> by_rank;
  by_rank.reserve(ranks.size());
  for (const RankSnapshot& snapshot : ranks) by_rank.push_back(&snapshot);
  const auto by_number = [](const RankSnapshot* a, const RankSnapshot* b) { return a->rank < b->rank; };
  if (!std::is_sorted(by_rank.begin(), by_rank.end(), by_number))  // as gathered, they are
    std::stable_sort(by_rank.begin(), by_rank.end(), by_number);

  // Visiting ranks in order makes each class's first member its lowest rank
  // and creates the classes sorted by lowest rank.
  std::vector<RankClass> classes;
  std::map<const RankSnapshot*, std::size_t, SameClassLess> class_of;
  std::size_t last = 0;  // the previous rank's class
  for (const RankSnapshot* snapshot : by_rank) {
    // Neighbouring ranks mostly share a class: one test of equality first,
    // cheaper than the two of ordering at each step of the search.
    if (classes.empty() || !same_class(*classes[last].representative, *snapshot)) {
      const auto [entry, created] = class_of.try_emplace(snapshot, classes.size());
      if (created) classes.push_back(RankClass{{}, snapshot, {}});
      last = entry->second;
    }
    RankClass& rank_class = classes[last];
    rank_class.ranks.push_back(snapshot->rank);
    rank_class.members.push_back(snapshot);
  }

  const std::unordered_set<int> core_ranks(core.core.begin(), core.core.end());
  std::stable_partition(classes.begin(), classes.end(), [&](const RankClass& rank_class) {
    return std::any_of(rank_class.ranks.begin(), rank_class.ranks.end(),
                       [&](int rank) { return core_ranks.contains(rank); });
  });
  return classes;
}

}  // namespace mpisentry::report
