// The wait-for graph as Graphviz input, drawn as MUST draws its deadlock
// graph: one node per rank, the arcs the analysis used, AND waits solid, OR
// waits dashed, possible waits dotted, every deadlock in red in a frame of its
// own, the ranks blocked behind them in orange.
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "report/quote.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

// "MPI_Recv"; empty for a thread outside MPI.
std::string call_name(const ThreadSnapshot& thread) {
  return thread.state == RankState::Running ? std::string() : thread.function;
}

// "rank 0\nnode1 pid 4101\nMPI_Recv\nblocked"; a rank of several threads
// lists each thread's call: "...\nthread 0: MPI_Recv\nthread 1: running\nblocked".
std::string node_label(const RankSnapshot& rank) {
  std::string label = fmt::format("rank {}\n{} pid {}\n", rank.rank, rank.host, rank.pid);
  if (rank.threads.size() == 1) {
    const std::string call = call_name(rank.threads.front());
    if (!call.empty()) label += call + "\n";
  } else {
    for (const ThreadSnapshot& thread : rank.threads) {
      const std::string call = call_name(thread);
      label += fmt::format("thread {}: {}\n", thread.id, call.empty() ? to_string(thread.state) : call);
    }
  }
  return label + to_string(rank.state);
}

std::string node_style(const RankSnapshot& rank, bool in_core, bool behind) {
  if (in_core) return R"(, color="red", style="bold")";
  if (behind) return R"(, color="orange")";
  if (rank.state == RankState::Running) return R"(, color="grey", fontcolor="grey")";
  return "";
}

// The waiting thread's reason, "thread 1: " first in a rank of several threads.
std::string arc_label(const Report& report, const WaitArc& arc) {
  const RankSnapshot* rank = find_rank(report.ranks, arc.from.rank);
  const ThreadSnapshot* thread = rank == nullptr ? nullptr : find_thread(*rank, arc.from.thread);
  if (thread == nullptr) return {};
  if (rank->threads.size() == 1) return thread->wait_reason;
  return fmt::format("thread {}: {}", thread->id, thread->wait_reason);
}

const char* arc_line(const WaitArc& arc) {
  if (arc.possible) return "dotted";
  return arc.mode == WaitMode::Any ? "dashed" : "solid";
}

}  // namespace

std::string format_dot(const Report& report) {
  std::string out = fmt::format("digraph mpisentry {{\n  label={};\n  labelloc=\"t\";\n  node [shape=\"box\"];\n",
                                dot_quote(check_name(report.check)));
  std::unordered_map<int, std::size_t> deadlock_of;  // rank -> its deadlock's index in core.cycles
  for (std::size_t i = 0; i < report.core.cycles.size(); ++i)
    for (int rank : report.core.cycles[i].ranks) deadlock_of[rank] = i;
  const std::unordered_set<int> core(report.core.core.begin(), report.core.core.end());
  const std::unordered_set<int> behind(report.core.blocked_behind.begin(), report.core.blocked_behind.end());
  for (const RankSnapshot& rank : report.ranks) {
    fmt::format_to(std::back_inserter(out), "  r{} [label={}{}];\n", rank.rank, dot_quote(node_label(rank)),
                   node_style(rank, core.contains(rank.rank), behind.contains(rank.rank)));
  }
  for (std::size_t i = 0; i < report.core.cycles.size(); ++i) {
    fmt::format_to(std::back_inserter(out), "  subgraph cluster_deadlock{0} {{\n    label=\"deadlock {0}\";\n    color=\"red\";\n   ",
                   i + 1);
    for (int rank : report.core.cycles[i].ranks) fmt::format_to(std::back_inserter(out), " r{};", rank);
    out += "\n  }\n";
  }
  for (const WaitArc& arc : report.arcs) {
    // Red within one deadlock; an arc from one deadlock to another is a wait like any.
    const auto from = deadlock_of.find(arc.from.rank), to = deadlock_of.find(arc.to);
    const bool core_arc = from != deadlock_of.end() && to != deadlock_of.end() && from->second == to->second;
    fmt::format_to(std::back_inserter(out), "  r{} -> r{} [label={}, style=\"{}{}\"{}];\n", arc.from.rank, arc.to,
                   dot_quote(arc_label(report, arc)), arc_line(arc), core_arc ? ",bold" : "",
                   core_arc ? R"(, color="red")" : "");
  }
  if (report.arcs_left_out > 0)
    fmt::format_to(std::back_inserter(out), "  // {} more arcs of the analysis are left out: too many to draw\n",
                   report.arcs_left_out);
  out += "}\n";
  return out;
}

}  // namespace mpisentry::report
