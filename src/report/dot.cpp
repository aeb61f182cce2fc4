// The wait-for graph as Graphviz input, drawn as MUST draws its deadlock
// graph: one node per rank, the arcs the analysis used, AND waits solid, OR
// waits dashed, possible waits dotted, the deadlock core in red.
#include <iterator>
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

std::string node_style(const RankSnapshot& rank, bool in_core) {
  if (in_core) return R"(, color="red", style="bold")";
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
  const std::unordered_set<int> core(report.core.core.begin(), report.core.core.end());
  for (const RankSnapshot& rank : report.ranks) {
    fmt::format_to(std::back_inserter(out), "  r{} [label={}{}];\n", rank.rank, dot_quote(node_label(rank)),
                   node_style(rank, core.contains(rank.rank)));
  }
  for (const WaitArc& arc : report.arcs) {
    const bool core_arc = core.contains(arc.from.rank) && core.contains(arc.to);
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
