#include "report/hosts.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace mpisentry::report {
namespace {

// Hosts named before the rest are counted, and runs ("0-511") of ranks or
// pids named per host.
constexpr std::size_t kMaxHostsListed = 8;
constexpr std::size_t kMaxRunsListed = 8;

// "4101-4103,4107" for a sequence in its own order: a run is values that go
// up by one. Past kMaxRunsListed runs, ",...".
std::string runs_text(const std::vector<int>& values) {
  std::string out;
  std::size_t runs = 0;
  for (std::size_t first = 0; first < values.size();) {
    std::size_t last = first;
    while (last + 1 < values.size() && values[last + 1] == values[last] + 1) ++last;
    if (runs == kMaxRunsListed) return out + ",...";
    if (!out.empty()) out += ',';
    out += last == first ? fmt::format("{}", values[first]) : fmt::format("{}-{}", values[first], values[last]);
    ++runs;
    first = last + 1;
  }
  return out;
}

// "host node2: rank 2 (pid 5001)", "host node1: ranks 0-1 (pids 4101-4102)";
// with the ranks cut short, their number: "host node1: ranks
// 0,2,4,6,8,10,12,14,... (100 ranks; pids 11,13,15,17,19,21,23,25,...)". A
// rank that did not answer has no pid (0).
std::string group_text(const HostGroup& group) {
  const bool one = group.ranks.size() == 1;
  const std::string ranks = runs_text(group.ranks);
  const std::string count =
      ranks.ends_with("...") ? fmt::format("{} ranks; ", group.ranks.size()) : std::string();
  const std::string host = group.host.empty() ? "an unknown host" : "host " + group.host;
  const bool pids_known = std::none_of(group.pids.begin(), group.pids.end(), [](int pid) { return pid <= 0; });
  const std::string pids = pids_known ? fmt::format("{} {}", one ? "pid" : "pids", runs_text(group.pids))
                                      : std::string(one ? "pid unknown" : "pids unknown");
  return fmt::format("{}: {} {} ({}{})", host, one ? "rank" : "ranks", ranks, count, pids);
}

}  // namespace

std::vector<HostGroup> group_by_host(const std::vector<const RankSnapshot*>& ranks) {
  std::vector<HostGroup> groups;
  std::unordered_map<std::string, std::size_t> group_of;
  for (const RankSnapshot* rank : ranks) {
    const auto [entry, created] = group_of.try_emplace(rank->host, groups.size());
    if (created) groups.push_back(HostGroup{rank->host, {}, {}});
    groups[entry->second].ranks.push_back(rank->rank);
    groups[entry->second].pids.push_back(rank->pid);
  }
  return groups;
}

std::string where_text(const std::vector<const RankSnapshot*>& ranks) {
  const std::vector<HostGroup> groups = group_by_host(ranks);
  std::string out;
  const std::size_t listed = std::min(groups.size(), kMaxHostsListed);
  for (std::size_t i = 0; i < listed; ++i) out += (i == 0 ? "" : "; ") + group_text(groups[i]);
  if (groups.size() > listed)
    out += fmt::format("; ... ({} more hosts, {} in all)", groups.size() - listed, groups.size());
  return out;
}

}  // namespace mpisentry::report
