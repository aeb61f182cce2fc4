#include "model/rank_set.hpp"

#include <catch2/catch.hpp>

#include <climits>
#include <vector>

#include "model/snapshot.hpp"

using mpisentry::RankSet;
using Runs = std::vector<RankSet::Run>;

TEST_CASE("RankSet keeps runs ascending, merging what overlaps or touches", "[report]") {
  CHECK(RankSet{}.runs().empty());
  CHECK(RankSet{5, 3, 4, 3, 9}.runs() == Runs{{3, 5}, {9, 9}});
  RankSet ranks{10, 20};
  ranks.add({12, 14});
  CHECK(ranks.runs() == Runs{{10, 10}, {12, 14}, {20, 20}});
  ranks.add(11);  // joins three runs into one
  CHECK(ranks.runs() == Runs{{10, 14}, {20, 20}});
  ranks.add({0, 25});  // covers them all
  CHECK(ranks.runs() == Runs{{0, 25}});
  ranks.add({-3, -1});  // before the first, touching it
  CHECK(ranks.runs() == Runs{{-3, 25}});
  ranks.add({INT_MAX - 1, INT_MAX});
  ranks.add(INT_MIN);
  CHECK(ranks.runs() == Runs{{INT_MIN, INT_MIN}, {-3, 25}, {INT_MAX - 1, INT_MAX}});
  CHECK(ranks.size() == 32);
}

TEST_CASE("RankSet answers size and intersection without expanding its runs", "[report]") {
  RankSet others;  // a member of a collective on 100,000 ranks: every other member
  others.add({0, 41});
  others.add({43, 99'999});
  CHECK(others.runs().size() == 2);
  CHECK(others.size() == 99'999);
  const std::vector<int> probes{-1, 0, 41, 42, 43, 99'999, 100'000};
  std::vector<int> found;
  others.for_each_in(probes, [&found](int rank) { found.push_back(rank); });
  CHECK(found == std::vector<int>{0, 41, 43, 99'999});
  CHECK(RankSet{INT_MAX, 7, 8}.runs() == Runs{{7, 8}, {INT_MAX, INT_MAX}});
  CHECK(to_string(others) == "0-41,43-99999");
  CHECK(to_string(RankSet{}).empty());
  CHECK(to_string(RankSet{7}) == "7");
}

TEST_CASE("RankSet intersects its runs with a sorted list", "[report]") {
  const RankSet waits{0, 1, 2, 3, 7, 8, 9};
  const std::vector<int> stragglers{2, 5, 8, 9, 12};
  std::vector<int> found;
  waits.for_each_in(stragglers, [&found](int rank) { found.push_back(rank); });
  CHECK(found == std::vector<int>{2, 8, 9});
  CHECK(waits.count_in(stragglers) == 3);
  CHECK(RankSet{}.count_in(stragglers) == 0);
  CHECK(waits.first_in(stragglers) == 2);
  CHECK(RankSet{3, 4}.first_in(stragglers) == std::nullopt);
  CHECK(RankSet{}.first_in(stragglers) == std::nullopt);
  CHECK(waits.first_in(std::vector<int>{}) == std::nullopt);
}

TEST_CASE("a collective member's waits on 100,000 ranks take a few bytes on the wire", "[report]") {
  mpisentry::RankSnapshot rank;
  rank.rank = 42;
  mpisentry::ThreadSnapshot thread;
  thread.waits_for.add({0, 41});
  thread.waits_for.add({43, 99'999});
  rank.threads.push_back(thread);
  const std::string bytes = mpisentry::serialize(rank);
  CHECK(bytes.size() < 110);  // 104 with the rank's own fields, held tasks and pending operations among them
  CHECK(mpisentry::deserialize(bytes) == rank);
}
