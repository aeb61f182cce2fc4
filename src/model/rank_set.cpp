#include "model/rank_set.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace mpisentry {
namespace {

// Whether a rank at `rank` would extend or overlap a run ending at `last`
// (in 64 bits: `last` may be INT_MAX).
bool touches(int last, int rank) { return static_cast<std::int64_t>(rank) <= static_cast<std::int64_t>(last) + 1; }

}  // namespace

RankSet::RankSet(std::initializer_list<int> ranks) : RankSet(std::span<const int>(ranks.begin(), ranks.size())) {}

RankSet::RankSet(std::span<const int> ranks) {
  if (std::is_sorted(ranks.begin(), ranks.end())) {
    for (const int rank : ranks) add(rank);
    return;
  }
  std::vector<int> sorted(ranks.begin(), ranks.end());
  std::sort(sorted.begin(), sorted.end());
  for (const int rank : sorted) add(rank);
}

void RankSet::add(Run run) {
  // The first run that ends at or after the rank before run.first: the new
  // run goes there, merged with every run it overlaps or touches.
  auto merge_from = std::lower_bound(runs_.begin(), runs_.end(), run.first,
                                     [](const Run& existing, int first) { return !touches(existing.last, first); });
  auto merge_to = merge_from;
  for (; merge_to != runs_.end() && touches(run.last, merge_to->first); ++merge_to) {
    run.first = std::min(run.first, merge_to->first);
    run.last = std::max(run.last, merge_to->last);
  }
  if (merge_from == merge_to) {
    runs_.insert(merge_from, run);
    return;
  }
  *merge_from = run;
  runs_.erase(merge_from + 1, merge_to);
}

void RankSet::add_all(const RankSet& other) {
  for (const Run& run : other.runs_) add(run);
}

std::size_t RankSet::size() const {
  std::size_t ranks = 0;
  for (const Run& run : runs_)
    ranks += static_cast<std::size_t>(static_cast<std::int64_t>(run.last) - run.first + 1);
  return ranks;
}

std::size_t RankSet::count_in(std::span<const int> sorted) const {
  std::size_t count = 0;
  for (const Run& run : runs_) {
    const auto from = std::lower_bound(sorted.begin(), sorted.end(), run.first);
    count += static_cast<std::size_t>(std::upper_bound(from, sorted.end(), run.last) - from);
  }
  return count;
}

std::optional<int> RankSet::first_in(std::span<const int> sorted) const {
  for (const Run& run : runs_) {
    const auto next = std::lower_bound(sorted.begin(), sorted.end(), run.first);
    if (next != sorted.end() && *next <= run.last) return *next;
  }
  return std::nullopt;
}

std::string to_string(const RankSet& ranks) {
  std::string out;
  for (const RankSet::Run& run : ranks.runs()) {
    if (!out.empty()) out += ',';
    if (run.first == run.last) {
      fmt::format_to(std::back_inserter(out), "{}", run.first);
    } else {
      fmt::format_to(std::back_inserter(out), "{}-{}", run.first, run.last);
    }
  }
  return out;
}

}  // namespace mpisentry
