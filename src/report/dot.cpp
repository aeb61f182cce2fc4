// The wait-for graph as Graphviz input, drawn as MUST draws its deadlock
// graph: AND waits solid, OR waits dashed, the deadlock core in red.
#include <iterator>
#include <unordered_set>

#include <fmt/format.h>

#include "report/quote.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

std::string node_label(const RankSnapshot& rank) {
  std::string label = fmt::format("rank {}\n", rank.rank);
  if (rank.state != RankState::Running && !rank.function.empty()) label += rank.function + "\n";
  return label + to_string(rank.state);
}

std::string node_style(const RankSnapshot& rank, bool in_core) {
  if (in_core) return R"(, color="red", style="bold")";
  if (rank.state == RankState::Running) return R"(, color="grey", fontcolor="grey")";
  return "";
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
  for (const RankSnapshot& rank : report.ranks) {
    const char* line = rank.wait_mode == WaitMode::Any ? "dashed" : "solid";
    for (const int target : rank.waits_for) {
      const bool core_edge = core.contains(rank.rank) && core.contains(target);
      fmt::format_to(std::back_inserter(out), "  r{} -> r{} [label={}, style=\"{}{}\"{}];\n", rank.rank, target,
                     dot_quote(rank.wait_reason), line, core_edge ? ",bold" : "", core_edge ? R"(, color="red")" : "");
    }
  }
  out += "}\n";
  return out;
}

}  // namespace mpisentry::report
