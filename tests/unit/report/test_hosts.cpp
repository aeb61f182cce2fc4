// Where ranks run: grouping by host, and the bounded "where:" text of a class.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "report/hosts.hpp"

using namespace mpisentry;
using namespace mpisentry::report;

namespace {

RankSnapshot on(int rank, std::string host, int pid) {
  RankSnapshot snapshot;
  snapshot.rank = rank;
  snapshot.host = std::move(host);
  snapshot.pid = pid;
  return snapshot;
}

std::vector<const RankSnapshot*> pointers(const std::vector<RankSnapshot>& ranks) {
  std::vector<const RankSnapshot*> out;
  for (const RankSnapshot& rank : ranks) out.push_back(&rank);
  return out;
}

}  // namespace

TEST_CASE("group_by_host keeps hosts in the order of their first rank, ranks and pids paired", "[report][hosts]") {
  const std::vector<RankSnapshot> ranks = {on(0, "node2", 40), on(1, "node1", 10), on(2, "node2", 41),
                                           on(3, "node1", 12)};
  const std::vector<HostGroup> groups = group_by_host(pointers(ranks));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].host == "node2");
  CHECK(groups[0].ranks == std::vector<int>{0, 2});
  CHECK(groups[0].pids == std::vector<int>{40, 41});
  CHECK(groups[1].host == "node1");
  CHECK(groups[1].ranks == std::vector<int>{1, 3});
  CHECK(groups[1].pids == std::vector<int>{10, 12});
}

TEST_CASE("where_text names each rank's host and pid, grouped by host", "[report][hosts]") {
  SECTION("one rank") {
    const std::vector<RankSnapshot> ranks = {on(3, "node1", 4104)};
    CHECK(where_text(pointers(ranks)) == "host node1: rank 3 (pid 4104)");
  }
  SECTION("two hosts; pids in the order of the ranks") {
    const std::vector<RankSnapshot> ranks = {on(0, "node1", 4101), on(1, "node1", 4102), on(2, "node2", 5007),
                                             on(3, "node2", 5003)};
    CHECK(where_text(pointers(ranks)) == "host node1: ranks 0-1 (pids 4101-4102); host node2: ranks 2-3 (pids 5007,5003)");
  }
  SECTION("a rank that did not say where it runs") {
    const std::vector<RankSnapshot> ranks = {on(0, "", 0)};
    CHECK(where_text(pointers(ranks)) == "an unknown host: rank 0 (pid unknown)");
  }
}

TEST_CASE("where_text of 100,000 ranks stays short", "[report][hosts]") {
  SECTION("1000 hosts of 100 ranks each: the first hosts, then how many in all") {
    std::vector<RankSnapshot> ranks;
    for (int rank = 0; rank < 100000; ++rank) ranks.push_back(on(rank, "n" + std::to_string(rank / 100), 1000 + rank % 100));
    const std::string text = where_text(pointers(ranks));
    CHECK(text.starts_with("host n0: ranks 0-99 (pids 1000-1099); host n1: ranks 100-199 (pids 1000-1099); "));
    CHECK(text.ends_with("; host n7: ranks 700-799 (pids 1000-1099); ... (992 more hosts, 1000 in all)"));
  }
  SECTION("one host, ranks and pids scattered: the first runs, then the number of ranks") {
    std::vector<RankSnapshot> ranks;
    for (int rank = 0; rank < 100000; rank += 2) ranks.push_back(on(rank, "big", 3 * rank + 1));
    CHECK(where_text(pointers(ranks)) ==
          "host big: ranks 0,2,4,6,8,10,12,14,... (50000 ranks; pids 1,7,13,19,25,31,37,43,...)");
  }
}
