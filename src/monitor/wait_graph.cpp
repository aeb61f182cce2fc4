#include "monitor/wait_graph.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>

namespace mpisentry::waitgraph {
namespace {

bool is_finalizing(RankState state) { return state == RankState::Finalizing; }
bool is_waiting(RankState state) { return state == RankState::Blocked || is_finalizing(state); }

// A send posted by `sender` that a receive posted by `receiver` matches.
bool matches(const PendingMessage& send, int sender, const PendingMessage& receive, int receiver) {
  return send.send && !receive.send && send.comm_id == receive.comm_id && send.peer == receiver &&
         (receive.peer == PendingMessage::kAny || receive.peer == sender) &&
         (receive.tag == PendingMessage::kAny || receive.tag == send.tag);
}

// What `rank` counted of its messages with `peer` on a communicator (the
// sum of its entries: twin communicators may share an id).
TagTally tally_of(const RankSnapshot& rank, std::uint64_t comm_id, int peer, TagTally MessageTally::*direction) {
  const auto [first, last] = std::equal_range(
      rank.tallies.begin(), rank.tallies.end(), MessageTally{comm_id, peer, {}, {}},
      [](const MessageTally& x, const MessageTally& y) {
        return std::tie(x.comm_id, x.peer) < std::tie(y.comm_id, y.peer);
      });
  TagTally total;
  for (auto entry = first; entry != last; ++entry) {
    const TagTally& tally = (*entry).*direction;
    total.count += tally.count;
    total.sum += tally.sum;
    total.squares += tally.squares;
  }
  return total;
}

// Whether a message that `sender` started to `receive`'s rank (`receiver`)
// and the receiver has not matched may end `receive`: it is in flight, and
// may still arrive. What the sender counted less what the receiver matched
// is in flight; for one or two messages, the sums of their tags and of the
// squares tell which tags they carry (two tags t1, t2 with sum s and squares
// q are the roots of 2t^2 - 2st + s^2 - q), for more any tag may be among
// them. Counts that disagree (a rank counted while it was read) may hide
// anything.
bool in_flight_to(const PendingMessage& receive, const RankSnapshot& receiver, const RankSnapshot& sender) {
  if (sender.tallies_unlisted) return true;
  const TagTally sent = tally_of(sender, receive.comm_id, receiver.rank, &MessageTally::sent);
  const TagTally matched = tally_of(receiver, receive.comm_id, sender.rank, &MessageTally::matched);
  const auto count = static_cast<std::int64_t>(sent.count - matched.count);
  if (count == 0) return false;
  if (count < 0 || count > 2 || receive.tag == PendingMessage::kAny) return true;
  const auto sum = static_cast<__int128>(static_cast<std::int64_t>(sent.sum - matched.sum));
  const auto squares = static_cast<__int128>(static_cast<std::int64_t>(sent.squares - matched.squares));
  const auto tag = static_cast<__int128>(receive.tag);
  if (count == 1) return sum == tag;
  return 2 * tag * tag - 2 * sum * tag + sum * sum - squares == 0;
}

// Whether `b` has posted an operation that matches `m` (of rank `a`): in a
// thread blocked in it, or among its active requests, whatever its threads
// do now, or has started a message that `m` may take and that is still in
// flight. A rank whose active requests are not all listed may have posted
// any operation.
bool posted_match(const PendingMessage& m, const RankSnapshot& a, const RankSnapshot& b) {
  if (m.peer != b.rank && !(!m.send && m.peer == PendingMessage::kAny)) return false;
  if (b.pending_unlisted) return true;
  const auto match = [&](const PendingMessage& t) {
    return matches(m, a.rank, t, b.rank) || matches(t, b.rank, m, a.rank);
  };
  for (const ThreadSnapshot& theirs : b.threads)
    if (theirs.state == RankState::Blocked && std::ranges::any_of(theirs.messages, match)) return true;
  return std::ranges::any_of(b.pending, match) || (!m.send && in_flight_to(m, a, b));
}

// What `b`'s posted operations do to the point-to-point parts of `mine` (a
// thread of rank `a`).
struct Transfers {
  bool any = false;        // some part with b is matched: under way
  bool all = true;         // every part with b is matched: `mine` waits for nothing more from b
  bool completes = false;  // a matched part may be all the call still needs
};
Transfers transfers_with(const ThreadSnapshot& mine, const RankSnapshot& a, const RankSnapshot& b) {
  Transfers found;
  for (const PendingMessage& m : mine.messages) {
    const bool with_b = m.peer == b.rank;
    if (!with_b && !(!m.send && m.peer == PendingMessage::kAny)) continue;
    const bool matched = posted_match(m, a, b);
    found.any = found.any || matched;
    found.all = found.all && (matched || !with_b);
    found.completes = found.completes || (matched && m.may_end_call);
  }
  found.all = found.all && found.any;
  return found;
}

// Whether `target` no longer holds up `call`: it has entered that collective
// (or a later one) on the same communicator.
bool arrived(const CollectiveCall& call, const RankSnapshot& target) {
  return call.comm_id != 0 && collectives_entered(target, call.comm_id) >= call.sequence;
}

// A wait for this many ranks or more is a collective's "every member", and
// worth work proportional to the job rather than to the wait.
constexpr std::size_t kManyRanks = 64;

// Which of the ranks a thread waits for have not arrived in its collective.
// A member of a collective on P ranks waits for the P - 1 others (two runs):
// asked about many ranks, a collective's stragglers are listed once, in one
// pass over the ranks, and each member's runs are intersected with that list,
// so that P members cost O(P + arcs) rather than P^2 look-ups.
class Arrivals {
 public:
  explicit Arrivals(const std::vector<RankSnapshot>& ranks) : ranks_(ranks) {}

  // Calls visit(target) for each rank of `waits` (a valid index: never trust
  // the wire) that has not arrived in `call`; for each of them when `call`
  // is no collective.
  template <typename Visit>
  void for_each_not_arrived(const CollectiveCall& call, const RankSet& waits, Visit visit) {
    if (const std::vector<int>* stragglers = stragglers_for(call, waits)) {
      waits.for_each_in(*stragglers, visit);
      return;
    }
    const auto last_rank = static_cast<std::int64_t>(ranks_.size()) - 1;
    for (const RankSet::Run& run : waits.runs())
      for (std::int64_t target = std::max<std::int64_t>(run.first, 0); target <= std::min<std::int64_t>(run.last, last_rank);
           ++target)
        if (!arrived(call, ranks_[static_cast<std::size_t>(target)])) visit(static_cast<int>(target));
  }

  // How many ranks for_each_not_arrived would visit, without visiting them.
  std::size_t count_not_arrived(const CollectiveCall& call, const RankSet& waits) {
    if (const std::vector<int>* stragglers = stragglers_for(call, waits)) return waits.count_in(*stragglers);
    std::size_t count = 0;
    for_each_not_arrived(call, waits, [&count](int) { ++count; });
    return count;
  }

 private:
  // The ranks not arrived in `call`, sorted, when `waits` holds so many ranks
  // that one pass over every rank costs less than looking them up; else null.
  const std::vector<int>* stragglers_for(const CollectiveCall& call, const RankSet& waits) {
    if (call.comm_id == 0 || waits.size() < kManyRanks) return nullptr;
    const auto [stragglers, created] = stragglers_.try_emplace({call.comm_id, call.sequence});
    if (created)
      for (std::size_t rank = 0; rank < ranks_.size(); ++rank)
        if (!arrived(call, ranks_[rank])) stragglers->second.push_back(static_cast<int>(rank));
    return &stragglers->second;
  }

  const std::vector<RankSnapshot>& ranks_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<int>> stragglers_;  // by (comm_id, sequence), sorted
};

// Whether `target` may hold up a passive-target lock, unlock or flush on
// `window`: it holds a lock there, or runs outside MPI, where MPI need not
// make progress for it.
bool may_hold_up_lock(const RankSnapshot& target, std::uint64_t window) {
  return target.state == RankState::Running ||
         std::find(target.locked_windows.begin(), target.locked_windows.end(), window) != target.locked_windows.end();
}

struct ThreadArcs {
  WaitMode mode = WaitMode::None;
  std::vector<int> definite;
  std::vector<int> possible;
};


// Sorted without duplicates: a thread's started collectives may wait for the same ranks.
void sort_unique(std::vector<int>& ranks) {
  if (!std::is_sorted(ranks.begin(), ranks.end())) std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
}

// What a blocked thread of `rank` waits for, after the collective and transfer rules.
// A target whose posted operations match every part of the call with it
// (a send and its receive, both posted: MPI completes one of them) is no
// longer waited for; a matched part that may be all the call needs
// (PendingMessage::may_end_call) leaves the call waiting for nothing.
ThreadArcs arcs_of(const std::vector<RankSnapshot>& ranks, Arrivals& arrivals, int rank,
                   const ThreadSnapshot& thread) {
  ThreadArcs arcs;
  bool may_complete = false;
  const auto waits_on = [&](int target) {
    if (thread.messages.empty()) return true;
    const Transfers transfers =
        transfers_with(thread, ranks[static_cast<std::size_t>(rank)], ranks[static_cast<std::size_t>(target)]);
    may_complete = may_complete || transfers.completes;
    return !transfers.all;
  };
  arrivals.for_each_not_arrived(thread.collective, thread.waits_for, [&](int target) {
    if (waits_on(target)) arcs.definite.push_back(target);
  });
  arrivals.for_each_not_arrived(thread.collective, thread.possibly_waits_for, [&](int target) {
    if (waits_on(target) &&
        (thread.lock_window == 0 || may_hold_up_lock(ranks[static_cast<std::size_t>(target)], thread.lock_window)))
      arcs.possible.push_back(target);
  });
  if (may_complete) return {};
  // A nonblocking collective waits for the members that have not started it.
  bool collective_can_complete = false;
  for (const StartedCollective& started : thread.started_collectives) {
    const std::size_t before = arcs.definite.size();
    arrivals.for_each_not_arrived(started.call, started.waits_for,
                                  [&](int target) { arcs.definite.push_back(target); });
    collective_can_complete = collective_can_complete || arcs.definite.size() == before;
    arrivals.for_each_not_arrived(started.call, started.possibly_waits_for,
                                  [&](int target) { arcs.possible.push_back(target); });
  }
  sort_unique(arcs.definite);
  sort_unique(arcs.possible);
  // One alternative of an OR wait that needs nobody more: the call may complete.
  if (thread.wait_mode == WaitMode::Any && collective_can_complete) arcs.definite.clear();
  arcs.mode = arcs.definite.empty() ? WaitMode::None : thread.wait_mode;
  return arcs;
}

// A wait-for graph in compressed rows: node v waits for targets[first[v]] up
// to targets[first[v + 1]].
struct Graph {
  std::vector<WaitMode> mode;
  std::vector<std::size_t> first{0};
  std::vector<int> targets;
  std::vector<bool> free;  // may act now: released from the start

  int size() const { return static_cast<int>(first.size()) - 1; }
  std::span<const int> targets_of(int node) const {
    return {targets.data() + first[static_cast<std::size_t>(node)],
            targets.data() + first[static_cast<std::size_t>(node) + 1]};
  }
  void close_node(WaitMode node_mode, bool is_free) {
    if (first.back() == targets.size() && node_mode != WaitMode::None && !is_free) node_mode = WaitMode::None;
    mode.push_back(node_mode);
    free.push_back(is_free);
    first.push_back(targets.size());
  }
};

// Whether `thread` of `rank` waits in a way a shared node stands for: an AND
// wait in a blocking collective it has entered, on many ranks, with nothing
// else (point-to-point messages, locks, started collectives) that the
// wait-for rules check one target at a time.
bool waits_as_shared(const std::vector<RankSnapshot>& ranks, int rank, const ThreadSnapshot& thread) {
  return thread.wait_mode == WaitMode::All && thread.collective.comm_id != 0 && thread.messages.empty() &&
         thread.lock_window == 0 && thread.started_collectives.empty() &&
         (thread.waits_for.size() >= kManyRanks || thread.possibly_waits_for.size() >= kManyRanks) &&
         arrived(thread.collective, ranks[static_cast<std::size_t>(rank)]);
}

// A wait for many ranks of a collective, shared by the members whose waits
// are the same: one node that waits (AND) for those of them that have not
// arrived. The members of a collective on P ranks that k of them have joined
// then cost k + P arcs, not k x (P - k). A member's waits with its own rank
// added are the same set for every member of a collective that waits for
// all the others; its own rank has arrived, so it is never a target.
class SharedWaits {
 public:
  SharedWaits(Arrivals& arrivals, int first_node) : arrivals_(arrivals), first_node_(first_node) {}

  // The node that waits for the ranks of `waits` not arrived in `call`; `rank` is the waiting member.
  int node_of(const CollectiveCall& call, RankSet waits, int rank) {
    waits.add(rank);
    auto [node, created] = nodes_.try_emplace({call.comm_id, call.sequence, waits.runs()}, 0);
    if (created) {
      node->second = first_node_ + static_cast<int>(targets_.size());
      targets_.emplace_back();
      arrivals_.for_each_not_arrived(call, waits, [this](int target) { targets_.back().push_back(target); });
    }
    return node->second;
  }

  // Adds the nodes, in the order node_of numbered them, after the graph's last node.
  void close_into(Graph& graph) const {
    for (const std::vector<int>& targets : targets_) {
      graph.targets.insert(graph.targets.end(), targets.begin(), targets.end());
      graph.close_node(WaitMode::All, false);
    }
  }

 private:
  Arrivals& arrivals_;
  int first_node_;
  std::map<std::tuple<std::uint64_t, std::uint64_t, std::vector<RankSet::Run>>, int> nodes_;
  std::vector<std::vector<int>> targets_;  // per node, from first_node_
};

// Nodes: the ranks (0..n-1), then one node per waiting thread of a stuck
// rank, then one node that waits (AND) for every rank not finalizing: what a
// Finalizing thread waits for (k Finalizing threads cost k + n arcs, not k * n),
// then the shared waits of collectives.
struct Layout {
  Graph graph;
  std::vector<ThreadRef> thread_of;  // per thread node, from node ranks.size()
};

// Which arcs the graph holds: those of the AND/OR analysis, or, to follow who
// waits for whom whatever the wait's mode, also the possible waits of OR waits.
enum class Arcs { ForAnalysis, ForReachability };

Layout build(const std::vector<RankSnapshot>& ranks, const Options& options, Arcs which = Arcs::ForAnalysis) {
  const int rank_count = static_cast<int>(ranks.size());
  std::vector<std::vector<int>> thread_nodes(ranks.size());
  std::vector<ThreadRef> thread_of;
  std::vector<const ThreadSnapshot*> threads;
  for (int rank = 0; rank < rank_count; ++rank) {
    const RankSnapshot& snapshot = ranks[static_cast<std::size_t>(rank)];
    if (!is_stuck(snapshot, options.min_stuck_seconds)) continue;
    for (const ThreadSnapshot& thread : snapshot.threads) {
      if (!is_waiting(thread.state)) continue;
      thread_nodes[static_cast<std::size_t>(rank)].push_back(rank_count + static_cast<int>(thread_of.size()));
      thread_of.push_back({rank, thread.id});
      threads.push_back(&thread);
    }
  }
  const int everyone_not_finalizing = rank_count + static_cast<int>(thread_of.size());

  Layout layout;
  Graph& graph = layout.graph;
  Arrivals arrivals(ranks);
  SharedWaits shared(arrivals, everyone_not_finalizing + 1);
  for (int rank = 0; rank < rank_count; ++rank) {
    const bool stuck = is_stuck(ranks[static_cast<std::size_t>(rank)], options.min_stuck_seconds);
    for (int node : thread_nodes[static_cast<std::size_t>(rank)]) graph.targets.push_back(node);
    graph.close_node(WaitMode::Any, !stuck);
  }
  for (std::size_t i = 0; i < thread_of.size(); ++i) {
    const ThreadSnapshot& thread = *threads[i];
    const int rank = thread_of[i].rank;
    if (is_finalizing(thread.state)) {
      graph.targets.push_back(everyone_not_finalizing);
      graph.close_node(WaitMode::All, false);
      continue;
    }
    if (waits_as_shared(ranks, rank, thread)) {
      graph.targets.push_back(shared.node_of(thread.collective, thread.waits_for, rank));
      if (options.with_possible_waits && !thread.possibly_waits_for.empty())
        graph.targets.push_back(shared.node_of(thread.collective, thread.possibly_waits_for, rank));
      graph.close_node(WaitMode::All, false);
      continue;
    }
    ThreadArcs arcs = arcs_of(ranks, arrivals, rank, thread);
    WaitMode mode = arcs.mode;
    graph.targets.insert(graph.targets.end(), arcs.definite.begin(), arcs.definite.end());
    // Possible waits are extra AND requirements; an OR wait stays as it is.
    if (options.with_possible_waits && (mode != WaitMode::Any || which == Arcs::ForReachability) &&
        !arcs.possible.empty()) {
      graph.targets.insert(graph.targets.end(), arcs.possible.begin(), arcs.possible.end());
      mode = WaitMode::All;
    }
    graph.close_node(mode, false);
  }
  for (int rank = 0; rank < rank_count; ++rank)
    if (!is_finalizing(ranks[static_cast<std::size_t>(rank)].state)) graph.targets.push_back(rank);
  graph.close_node(WaitMode::All, false);
  shared.close_into(graph);
  layout.thread_of = std::move(thread_of);
  return layout;
}

// Who waits for each node: the arcs reversed, duplicates kept so that an AND
// waiter is counted down once per arc.
Graph reverse(const Graph& graph) {
  Graph reversed;
  reversed.first.assign(graph.first.size(), 0);
  for (int target : graph.targets) ++reversed.first[static_cast<std::size_t>(target) + 1];
  for (std::size_t node = 1; node < reversed.first.size(); ++node) reversed.first[node] += reversed.first[node - 1];
  reversed.targets.resize(graph.targets.size());
  std::vector<std::size_t> next(reversed.first.begin(), reversed.first.end() - 1);
  for (int waiter = 0; waiter < graph.size(); ++waiter)
    for (int target : graph.targets_of(waiter)) reversed.targets[next[static_cast<std::size_t>(target)]++] = waiter;
  return reversed;
}

// MUST's reduction: free nodes and nodes that wait for nothing are released,
// then AND nodes once all their targets are, OR nodes once one of them is.
// Whatever is never released is deadlocked.
std::vector<bool> find_deadlocked(const Graph& graph) {
  const Graph waiters = reverse(graph);
  std::vector<bool> deadlocked(static_cast<std::size_t>(graph.size()), true);
  std::vector<std::size_t> still_needed(static_cast<std::size_t>(graph.size()));
  std::vector<int> to_release;
  for (int node = 0; node < graph.size(); ++node) {
    const auto n = static_cast<std::size_t>(node);
    if (graph.free[n] || graph.mode[n] == WaitMode::None) {
      deadlocked[n] = false;
      to_release.push_back(node);
    }
    still_needed[n] = graph.mode[n] == WaitMode::All ? graph.targets_of(node).size() : 1;
  }
  while (!to_release.empty()) {
    const int released = to_release.back();
    to_release.pop_back();
    for (int waiter : waiters.targets_of(released)) {
      const auto w = static_cast<std::size_t>(waiter);
      if (deadlocked[w] && --still_needed[w] == 0) {
        deadlocked[w] = false;
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
  const auto size = static_cast<std::size_t>(graph.size());
  std::vector<int> component(size, -1), order(size, unvisited), lowest(size, 0);
  std::vector<bool> on_stack(size, false);
  std::vector<int> stack;
  struct Visit {
    int node;
    std::size_t next_arc;
  };
  std::vector<Visit> path;
  int visited = 0, components = 0;
  const auto enter = [&](int node) {
    const auto n = static_cast<std::size_t>(node);
    order[n] = lowest[n] = visited++;
    stack.push_back(node);
    on_stack[n] = true;
    path.push_back({node, graph.first[n]});
  };
  for (int root = 0; root < graph.size(); ++root) {
    if (!deadlocked[static_cast<std::size_t>(root)] || order[static_cast<std::size_t>(root)] != unvisited) continue;
    enter(root);
    while (!path.empty()) {
      const int node = path.back().node;
      const auto n = static_cast<std::size_t>(node);
      if (path.back().next_arc < graph.first[n + 1]) {
        const int target = graph.targets[path.back().next_arc++];
        const auto t = static_cast<std::size_t>(target);
        if (!deadlocked[t]) continue;
        if (order[t] == unvisited) {
          enter(target);
        } else if (on_stack[t]) {
          lowest[n] = std::min(lowest[n], order[t]);
        }
        continue;
      }
      path.pop_back();
      if (!path.empty()) {
        const auto parent = static_cast<std::size_t>(path.back().node);
        lowest[parent] = std::min(lowest[parent], lowest[n]);
      }
      if (lowest[n] != order[n]) continue;
      int member;
      do {
        member = stack.back();
        stack.pop_back();
        on_stack[static_cast<std::size_t>(member)] = false;
        component[static_cast<std::size_t>(member)] = components;
      } while (member != node);
      ++components;
    }
  }
  return component;
}

// Whether a deadlocked node lies on a cycle: its component has another node,
// or it waits for itself.
std::vector<bool> find_on_cycle(const Graph& graph, const std::vector<int>& component) {
  std::vector<int> component_size(static_cast<std::size_t>(graph.size()), 0);
  for (int id : component)
    if (id >= 0) ++component_size[static_cast<std::size_t>(id)];
  std::vector<bool> on_cycle(static_cast<std::size_t>(graph.size()), false);
  for (int node = 0; node < graph.size(); ++node) {
    const int id = component[static_cast<std::size_t>(node)];
    if (id < 0) continue;
    const auto targets = graph.targets_of(node);
    on_cycle[static_cast<std::size_t>(node)] =
        component_size[static_cast<std::size_t>(id)] > 1 || std::ranges::find(targets, node) != targets.end();
  }
  return on_cycle;
}

// The shortest cycle through a node inside its component (breadth-first),
// for one component after another: each search resets only the nodes it
// reached, so that the cycles of many small deadlocks cost their own size,
// not the graph's each.
class CycleFinder {
 public:
  CycleFinder(const Graph& graph, const std::vector<int>& component)
      : graph_(graph), component_(component), reached_from_(static_cast<std::size_t>(graph.size()), kUnreached) {}

  // The cycle through `start` in wait order, as ranks (nodes below
  // `rank_count`), with `start` repeated at the end.
  std::vector<int> cycle_through(int start, int rank_count) {
    std::vector<int> frontier{start};
    int last = kUnreached;  // the node whose arc closes the cycle back to start
    for (std::size_t head = 0; head < frontier.size() && last == kUnreached; ++head) {
      const int node = frontier[head];
      for (int target : graph_.targets_of(node)) {
        if (target == start) {
          last = node;
          break;
        }
        const auto t = static_cast<std::size_t>(target);
        if (component_[t] == component_[static_cast<std::size_t>(start)] && reached_from_[t] == kUnreached) {
          reached_from_[t] = node;
          frontier.push_back(target);
        }
      }
    }
    std::vector<int> cycle{start};
    for (int node = last; node != start && node != kUnreached; node = reached_from_[static_cast<std::size_t>(node)])
      if (node < rank_count) cycle.push_back(node);
    std::reverse(cycle.begin() + 1, cycle.end());
    cycle.push_back(start);
    for (int node : frontier) reached_from_[static_cast<std::size_t>(node)] = kUnreached;
    return cycle;
  }

 private:
  static constexpr int kUnreached = -1;
  const Graph& graph_;
  const std::vector<int>& component_;
  std::vector<int> reached_from_;
};

}  // namespace

bool is_stuck(const RankSnapshot& rank, double min_stuck_seconds) {
  return is_waiting(rank.state) && rank.seconds >= min_stuck_seconds && !rank.threads.empty();
}

std::uint64_t collectives_entered(const RankSnapshot& rank, std::uint64_t comm_id) {
  const auto found = std::lower_bound(rank.collectives.begin(), rank.collectives.end(), comm_id,
                                      [](const CollectiveCount& count, std::uint64_t id) { return count.comm_id < id; });
  return found != rank.collectives.end() && found->comm_id == comm_id ? found->entered : 0;
}

DeadlockCore find_deadlock(const std::vector<RankSnapshot>& ranks, const Options& options) {
  const Layout layout = build(ranks, options);
  const Graph& graph = layout.graph;
  const std::vector<bool> deadlocked = find_deadlocked(graph);
  const std::vector<int> component = find_components(graph, deadlocked);
  const std::vector<bool> on_cycle = find_on_cycle(graph, component);
  const int rank_count = static_cast<int>(ranks.size());
  DeadlockCore result;
  std::map<int, std::size_t> cycle_of_component;  // component -> its index in result.cycles
  for (int rank = 0; rank < rank_count; ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (on_cycle[r]) {
      result.core.push_back(rank);
      // Visited by rank, the components' cycles come in order of their lowest rank.
      const auto [entry, added] = cycle_of_component.try_emplace(component[r], result.cycles.size());
      if (added) result.cycles.emplace_back();
      result.cycles[entry->second].ranks.push_back(rank);
    } else if (deadlocked[r]) {
      result.blocked_behind.push_back(rank);
    }
  }
  CycleFinder finder(graph, component);
  for (DeadlockCycle& deadlock : result.cycles) deadlock.cycle = finder.cycle_through(deadlock.ranks.front(), rank_count);
  return result;
}

ArcList effective_arcs(const std::vector<RankSnapshot>& ranks, const Options& options, std::size_t max_arcs) {
  ArcList result;
  Arrivals arrivals(ranks);
  const auto not_finalizing = static_cast<std::size_t>(std::ranges::count_if(
      ranks, [](const RankSnapshot& rank) { return !is_finalizing(rank.state); }));
  // Whether a thread's `count` arcs fit in the list; counted as left out if not.
  const auto fits = [&](std::size_t count) {
    if (count <= max_arcs - result.arcs.size()) return true;
    result.left_out += count;
    return false;
  };
  for (int rank = 0; rank < static_cast<int>(ranks.size()); ++rank) {
    const RankSnapshot& snapshot = ranks[static_cast<std::size_t>(rank)];
    for (const ThreadSnapshot& thread : snapshot.threads) {
      const ThreadRef from{rank, thread.id};
      if (is_finalizing(thread.state)) {
        if (fits(not_finalizing))
          for (int other = 0; other < static_cast<int>(ranks.size()); ++other)
            if (!is_finalizing(ranks[static_cast<std::size_t>(other)].state))
              result.arcs.push_back({from, other, WaitMode::All, false});
        continue;
      }
      if (thread.state != RankState::Blocked) continue;
      // A shared wait is counted before its arcs are made: there may be P of them.
      if (waits_as_shared(ranks, rank, thread) &&
          !fits(arrivals.count_not_arrived(thread.collective, thread.waits_for) +
                (options.with_possible_waits ? arrivals.count_not_arrived(thread.collective, thread.possibly_waits_for)
                                             : 0)))
        continue;
      const ThreadArcs arcs = arcs_of(ranks, arrivals, rank, thread);
      if (!fits(arcs.definite.size() + (options.with_possible_waits ? arcs.possible.size() : 0))) continue;
      for (int target : arcs.definite) result.arcs.push_back({from, target, arcs.mode, false});
      if (options.with_possible_waits)
        for (int target : arcs.possible) result.arcs.push_back({from, target, WaitMode::All, true});
    }
  }
  return result;
}

OutsideMpi find_outside_mpi(const std::vector<RankSnapshot>& ranks, double min_waiting_seconds) {
  // Through blocked ranks only: a polling rank is in MPI, and whoever it
  // waits for is a question for NO_PROGRESS. Only waiting ranks have arcs in
  // the graph, so a walk along them passes through no other rank. One walk
  // forward from every long-waiting rank finds the culprits, one backward
  // from every rank outside MPI finds who waits for one: linear in the graph.
  const Graph graph = build(ranks, {0, /*with_possible_waits=*/true}, Arcs::ForReachability).graph;
  const auto rank_count = static_cast<int>(ranks.size());
  const auto is_running = [&](int node) {
    return node < rank_count && ranks[static_cast<std::size_t>(node)].state == RankState::Running;
  };
  const auto reach = [](const Graph& arcs, std::vector<int> from) {
    std::vector<bool> reached(static_cast<std::size_t>(arcs.size()), false);
    for (int node : from) reached[static_cast<std::size_t>(node)] = true;
    while (!from.empty()) {
      const int node = from.back();
      from.pop_back();
      for (int target : arcs.targets_of(node))
        if (!reached[static_cast<std::size_t>(target)]) {
          reached[static_cast<std::size_t>(target)] = true;
          from.push_back(target);
        }
    }
    return reached;
  };
  std::vector<int> long_waiting, running;
  for (int rank = 0; rank < rank_count; ++rank) {
    if (is_stuck(ranks[static_cast<std::size_t>(rank)], min_waiting_seconds)) long_waiting.push_back(rank);
    if (is_running(rank)) running.push_back(rank);
  }
  const std::vector<bool> from_waiting = reach(graph, long_waiting);
  const std::vector<bool> to_running = reach(reverse(graph), running);
  OutsideMpi result;
  for (int rank : long_waiting)
    if (to_running[static_cast<std::size_t>(rank)]) result.waiting.push_back(rank);
  for (int rank : running)
    if (from_waiting[static_cast<std::size_t>(rank)]) result.culprits.push_back(rank);
  return result;
}

}  // namespace mpisentry::waitgraph
