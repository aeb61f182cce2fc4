// A set of MPI_COMM_WORLD ranks kept as sorted runs of consecutive ranks.
// A member of a collective on P ranks waits for "every member but me": two
// runs, not P - 1 numbers, in each rank's snapshot, on the wire to rank 0, in
// the judge and in the reports, so that a collective of 100,000 ranks costs
// rank 0 linear, not quadratic, time and memory.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mpisentry {

class RankSet {
 public:
  struct Run {
    int first = 0;
    int last = 0;  // inclusive, >= first
    auto operator<=>(const Run&) const = default;  // by first, then last
  };

  RankSet() = default;
  RankSet(std::initializer_list<int> ranks);      // any order, repeats allowed
  explicit RankSet(std::span<const int> ranks);   // any order, repeats allowed
  explicit RankSet(const std::vector<int>& ranks) : RankSet(std::span<const int>(ranks)) {}

  // Adds the ranks first..last (first <= last), merging with the runs it
  // touches: O(log runs) when added in ascending order.
  void add(Run run);
  void add(int rank) { add(Run{rank, rank}); }
  void add_all(const RankSet& other);

  bool empty() const { return runs_.empty(); }
  std::size_t size() const;  // ranks, not runs
  const std::vector<Run>& runs() const { return runs_; }

  // Calls visit(rank) for each rank of `sorted` (ascending) in this set:
  // O(runs x log |sorted| + found), however many ranks the runs hold.
  template <typename Visit>
  void for_each_in(std::span<const int> sorted, Visit visit) const;
  // How many ranks of `sorted` (ascending) are in this set: O(runs x log |sorted|).
  std::size_t count_in(std::span<const int> sorted) const;
  // The lowest rank of `sorted` (ascending) in this set.
  std::optional<int> first_in(std::span<const int> sorted) const;

  bool operator==(const RankSet&) const = default;

 private:
  std::vector<Run> runs_;  // ascending, neither overlapping nor adjacent
};

// "0-3,5,7-8"; empty for an empty set.
std::string to_string(const RankSet& ranks);

template <typename Visit>
void RankSet::for_each_in(std::span<const int> sorted, Visit visit) const {
  auto next = sorted.begin();
  for (const Run& run : runs_) {
    next = std::lower_bound(next, sorted.end(), run.first);
    for (; next != sorted.end() && *next <= run.last; ++next) visit(*next);
    if (next == sorted.end()) return;
  }
}

}  // namespace mpisentry
