// Where ranks run: their hosts and pids, grouped by host so that a class of
// many ranks on a few nodes says so in one line.
#pragma once

#include <string>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::report {

// The ranks of one host, and their pids in the same order.
struct HostGroup {
  std::string host;
  std::vector<int> ranks;
  std::vector<int> pids;
};

// One group per host, in the order of each host's first rank in `ranks`;
// within a group, ranks keep their order in `ranks`.
std::vector<HostGroup> group_by_host(const std::vector<const RankSnapshot*>& ranks);

// "host node1: ranks 0-1 (pids 4101-4102); host node2: rank 2 (pid 5001)",
// for ranks given in ascending order. The i-th pid is the i-th rank's. Bounded
// for any number of ranks: past a few hosts it counts the rest, past a few
// runs of ranks or pids it counts the ranks.
std::string where_text(const std::vector<const RankSnapshot*>& ranks);

}  // namespace mpisentry::report
