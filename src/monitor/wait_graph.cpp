#include "monitor/wait_graph.hpp"

#include <algorithm>
#include <cstddef>
#include <span>

namespace mpisentry::waitgraph {
namespace {

bool is_finalizing(const RankSnapshot& rank) { return rank.state == RankState::Finalizing; }

bool is_stuck(const RankSnapshot& rank, double min_stuck_seconds) {
  return (rank.state == RankState::Blocked || is_finalizing(rank)) && rank.seconds >= min_stuck_seconds;
}

// A send posted by `sender` that a receive posted by `receiver` matches.
bool matches(const PendingMessage& send, int sender, const PendingMessage& receive, int receiver) {
  return send.send && !receive.send && send.comm_key == receive.comm_key && send.peer == receiver &&
         (receive.peer == PendingMessage::kAny || receive.peer == sender) &&
         (receive.tag == PendingMessage::kAny || receive.tag == send.tag);
}

// Both blocked with a send of one matching a receive of the other: the
// message is on its way (a large or slow transfer), neither waits for the other.
bool transfer_under_way(const RankSnapshot& a, int a_rank, const RankSnapshot& b, int b_rank) {
  if (a.state != RankState::Blocked || b.state != RankState::Blocked) return false;
  for (const PendingMessage& mine : a.messages)
    for (const PendingMessage& theirs : b.messages)
      if (matches(mine, a_rank, theirs, b_rank) || matches(theirs, b_rank, mine, a_rank)) return true;
  return false;
}

// Appends the targets of a rank that is not Finalizing, after the collective
// and transfer rules, and returns its mode. Out-of-range targets are dropped rather than
// trusted: the snapshots come over the wire, and the analysis must not index
// past them.
WaitMode append_own_arcs(const std::vector<RankSnapshot>& ranks, int rank, std::vector<int>& targets) {
  const RankSnapshot& self = ranks[rank];
  if (self.wait_mode == WaitMode::None) return WaitMode::None;
  const bool in_collective = self.state == RankState::Blocked && self.collective_key != 0;
  const std::size_t first = targets.size();
  for (int target : self.waits_for) {
    if (target < 0 || static_cast<std::size_t>(target) >= ranks.size()) continue;
    const RankSnapshot& other = ranks[target];
    const bool arrived_too = other.state == RankState::Blocked && other.collective_key == self.collective_key;
    if ((in_collective && arrived_too) || transfer_under_way(self, rank, other, target)) continue;
    targets.push_back(target);
  }
  return targets.size() == first ? WaitMode::None : self.wait_mode;
}

// Appends every rank that is not Finalizing: what a Finalizing rank waits for.
WaitMode append_non_finalizing(const std::vector<RankSnapshot>& ranks, std::vector<int>& targets) {
  const std::size_t first = targets.size();
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    if (!is_finalizing(ranks[rank])) targets.push_back(static_cast<int>(rank));
  }
  return targets.size() == first ? WaitMode::None : WaitMode::All;
}

// A wait-for graph in compressed rows: node v waits for targets[first[v]] up
// to targets[first[v + 1]].
struct Graph {
  std::vector<WaitMode> mode;
  std::vector<std::size_t> first{0};
  std::vector<int> targets;

  int size() const { return static_cast<int>(first.size()) - 1; }
  std::span<const int> targets_of(int node) const {
    return {targets.data() + first[node], targets.data() + first[node + 1]};
  }
  void close_node(WaitMode node_mode) {
    mode.push_back(node_mode);
    first.push_back(targets.size());
  }
};

// The graph of effective_arcs, except that Finalizing ranks wait for one extra
// node, numbered ranks.size(), that waits (AND) for every rank not Finalizing.
// Paths, cycles and releases are the same as with direct arcs, but k Finalizing
// ranks cost k + n arcs instead of k * (n - k).
Graph build_graph(const std::vector<RankSnapshot>& ranks) {
  const int everyone_not_finalizing = static_cast<int>(ranks.size());
  Graph graph;
  for (int rank = 0; rank < everyone_not_finalizing; ++rank) {
    if (is_finalizing(ranks[rank])) {
      graph.targets.push_back(everyone_not_finalizing);
      graph.close_node(WaitMode::All);
    } else {
      graph.close_node(append_own_arcs(ranks, rank, graph.targets));
    }
  }
  graph.close_node(append_non_finalizing(ranks, graph.targets));
  return graph;
}

// Who waits for each node: the arcs reversed (modes left empty), duplicates
// kept so that an AND waiter is counted down once per arc.
Graph reverse(const Graph& graph) {
  Graph reversed;
  reversed.first.assign(graph.first.size(), 0);
  for (int target : graph.targets) ++reversed.first[target + 1];
  for (std::size_t node = 1; node < reversed.first.size(); ++node)
    reversed.first[node] += reversed.first[node - 1];
  reversed.targets.resize(graph.targets.size());
  std::vector<std::size_t> next(reversed.first.begin(), reversed.first.end() - 1);
  for (int waiter = 0; waiter < graph.size(); ++waiter) {
    for (int target : graph.targets_of(waiter)) reversed.targets[next[target]++] = waiter;
  }
  return reversed;
}

// MUST's reduction: free ranks and nodes that wait for nothing are released,
// then AND nodes once all their targets are, OR nodes once one of them is.
// Whatever is never released is deadlocked.
std::vector<bool> find_deadlocked(const std::vector<RankSnapshot>& ranks, const Graph& graph,
                                  double min_stuck_seconds) {
  const Graph waiters = reverse(graph);
  std::vector<bool> deadlocked(graph.size(), true);
  std::vector<std::size_t> still_needed(graph.size());
  std::vector<int> to_release;
  for (int node = 0; node < graph.size(); ++node) {
    const bool free_rank = node < static_cast<int>(ranks.size()) && !is_stuck(ranks[node], min_stuck_seconds);
    if (free_rank || graph.mode[node] == WaitMode::None) {
      deadlocked[node] = false;
      to_release.push_back(node);
    }
    still_needed[node] = graph.mode[node] == WaitMode::All ? graph.targets_of(node).size() : 1;
  }
  while (!to_release.empty()) {
    const int released = to_release.back();
    to_release.pop_back();
    for (int waiter : waiters.targets_of(released)) {
      if (deadlocked[waiter] && --still_needed[waiter] == 0) {
        deadlocked[waiter] = false;
        to_release.push_back(waiter);
      }
    }
  }
  return deadlocked;
}

// Strongly connected components of the deadlocked subgraph (Tarjan's
// algorithm with an explicit stack, so that a chain of 100k ranks cannot
// overflow the thread's stack). component[v] is -1 for released nodes.
std::vector<int> find_components(const Graph& graph, const std::vector<bool>& deadlocked) {
  constexpr int unvisited = -1;
  std::vector<int> component(graph.size(), -1);
  std::vector<int> order(graph.size(), unvisited);
  std::vector<int> lowest(graph.size(), 0);
  std::vector<bool> on_stack(graph.size(), false);
  std::vector<int> stack;
  struct Visit {
    int node;
    std::size_t next_arc;
  };
  std::vector<Visit> path;
  int visited = 0;
  int components = 0;
  const auto enter = [&](int node) {
    order[node] = lowest[node] = visited++;
    stack.push_back(node);
    on_stack[node] = true;
    path.push_back({node, graph.first[node]});
  };
  for (int root = 0; root < graph.size(); ++root) {
    if (!deadlocked[root] || order[root] != unvisited) continue;
    enter(root);
    while (!path.empty()) {
      const int node = path.back().node;
      if (path.back().next_arc < graph.first[node + 1]) {
        const int target = graph.targets[path.back().next_arc++];
        if (!deadlocked[target]) continue;
        if (order[target] == unvisited) {
          enter(target);
        } else if (on_stack[target]) {
          lowest[node] = std::min(lowest[node], order[target]);
        }
        continue;
      }
      path.pop_back();
      if (!path.empty()) {
        const int parent = path.back().node;
        lowest[parent] = std::min(lowest[parent], lowest[node]);
      }
      if (lowest[node] != order[node]) continue;
      int member;
      do {
        member = stack.back();
        stack.pop_back();
        on_stack[member] = false;
        component[member] = components;
      } while (member != node);
      ++components;
    }
  }
  return component;
}

// Whether a deadlocked node lies on a cycle: its component has another node,
// or it waits for itself.
std::vector<bool> find_on_cycle(const Graph& graph, const std::vector<int>& component) {
  std::vector<int> component_size(graph.size(), 0);
  for (int id : component) {
    if (id >= 0) ++component_size[id];
  }
  std::vector<bool> on_cycle(graph.size(), false);
  for (int node = 0; node < graph.size(); ++node) {
    if (component[node] < 0) continue;
    const auto targets = graph.targets_of(node);
    on_cycle[node] = component_size[component[node]] > 1 || std::ranges::find(targets, node) != targets.end();
  }
  return on_cycle;
}

// The shortest cycle through `start` inside its component (breadth-first),
// in wait order, with `start` repeated at the end and the extra Finalize node
// left out.
std::vector<int> find_cycle(const Graph& graph, const std::vector<int>& component, int start,
                            int rank_count) {
  constexpr int unreached = -1;
  std::vector<int> reached_from(graph.size(), unreached);
  std::vector<int> frontier{start};
  int last = unreached;  // the node whose arc closes the cycle back to start
  for (std::size_t head = 0; head < frontier.size() && last == unreached; ++head) {
    const int node = frontier[head];
    for (int target : graph.targets_of(node)) {
      if (target == start) {
        last = node;
        break;
      }
      if (component[target] == component[start] && reached_from[target] == unreached) {
        reached_from[target] = node;
        frontier.push_back(target);
      }
    }
  }
  std::vector<int> cycle{start};
  for (int node = last; node != start; node = reached_from[node]) {
    if (node < rank_count) cycle.push_back(node);
  }
  std::reverse(cycle.begin() + 1, cycle.end());
  cycle.push_back(start);
  return cycle;
}

}  // namespace

DeadlockCore find_deadlock(const std::vector<RankSnapshot>& ranks, double min_stuck_seconds) {
  const Graph graph = build_graph(ranks);
  const std::vector<bool> deadlocked = find_deadlocked(ranks, graph, min_stuck_seconds);
  const std::vector<int> component = find_components(graph, deadlocked);
  const std::vector<bool> on_cycle = find_on_cycle(graph, component);
  const int rank_count = static_cast<int>(ranks.size());
  DeadlockCore result;
  for (int rank = 0; rank < rank_count; ++rank) {
    if (on_cycle[rank]) {
      result.core.push_back(rank);
    } else if (deadlocked[rank]) {
      result.blocked_behind.push_back(rank);
    }
  }
  if (!result.core.empty()) result.cycle = find_cycle(graph, component, result.core.front(), rank_count);
  return result;
}

std::vector<Arcs> effective_arcs(const std::vector<RankSnapshot>& ranks) {
  std::vector<int> non_finalizing;
  const WaitMode finalizing_mode = append_non_finalizing(ranks, non_finalizing);
  std::vector<Arcs> arcs(ranks.size());
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {
    if (is_finalizing(ranks[rank])) {
      arcs[rank] = {finalizing_mode, non_finalizing};
    } else {
      arcs[rank].mode = append_own_arcs(ranks, static_cast<int>(rank), arcs[rank].targets);
    }
  }
  return arcs;
}

}  // namespace mpisentry::waitgraph
