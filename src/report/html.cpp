// The page is drawn from the JSON report alone, so that a report copied off
// a cluster can be turned into a page anywhere. Its first screen says where
// in the code the ranks are: the classes' stacks merged into one tree (STAT's
// prefix tree), each node with its ranks. The wait-for graph stays readable
// at any number of ranks: the ranks of each deadlock's cycle (at most
// kCycleShown of them, the middle of a longer cycle folded into one node) sit
// on a circle of their own, at most kCirclesDrawn circles, and every other
// rank is in the node of its class (ranks that print the same), at most
// kClassNodes of them.
// nlohmann's diagnostics put the path of a missing or mistyped key into its
// messages ("(/ranks/3) key 'pid' not found"), which BadReport passes on.
#define JSON_DIAGNOSTICS 1
#include "report/html.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

using ReportJson = nlohmann::json;

constexpr std::string_view kSchema = "mpisentry-report/5";
constexpr std::size_t kCycleShown = 12;   // a longer cycle shows its first and last kCycleEnds
constexpr std::size_t kCycleEnds = 5;
constexpr std::size_t kCirclesDrawn = 6;  // the ranks of further deadlocks are in their classes' nodes
constexpr std::size_t kClassNodes = 24;  // more classes share one last node; the tree shows as many classes
constexpr std::size_t kDeadlocksListed = 8;  // more deadlocks are counted in one line
constexpr std::size_t kInnermostFrames = 3;  // frames the tree shows above each call; further out, folded
constexpr std::size_t kCallsListed = 16;  // a class of more ranks lists its representative's calls alone
constexpr int kSourceContext = 2;         // source lines shown around a frame's line

std::string escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string ranks_text(const std::vector<int>& ranks) {
  return ranks.size() == 1 ? "rank " + std::to_string(ranks.front())
                           : fmt::format("ranks {} ({} ranks)", compress_ranks(ranks), ranks.size());
}

// ---------------------------------------------------------------- reading

ReportJson parse(std::string_view text) {
  try {
    return ReportJson::parse(text);
  } catch (const ReportJson::parse_error& error) {
    if (error.byte >= text.size())
      throw BadReport(fmt::format("truncated: the JSON stops after {} bytes, before the report is complete (was "
                                  "the job ended while it wrote the report?)",
                                  text.size()));
    const std::string what = error.what();
    throw BadReport("not JSON: " + what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
  }
}

void check_schema(const ReportJson& report) {
  if (!report.is_object()) throw BadReport("not an mpisentry report: the JSON is not an object");
  const auto schema = report.find("schema");
  if (schema == report.end() || !schema->is_string())
    throw BadReport("not an mpisentry report: it has no \"schema\" naming mpisentry-report/5");
  if (schema->get<std::string>() != kSchema)
    throw BadReport(fmt::format("schema \"{}\": this mpisentry reads {}; make the page with the mpisentry that "
                                "wrote the report",
                                schema->get<std::string>(), kSchema));
}

std::vector<int> rank_list(const ReportJson& ranks) { return ranks.get<std::vector<int>>(); }

std::string runs_text(const ReportJson& runs) {
  std::string text;
  for (const ReportJson& run : runs) {
    const int first = run.at(0).get<int>(), last = run.at(1).get<int>();
    text += (text.empty() ? "" : ",") + (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return text;
}

// "rank 3" or "ranks 0-2,5", from runs_text's "3" or "0-2,5".
std::string ranks_of_runs(const std::string& runs) {
  return (runs.find_first_of(",-") == std::string::npos ? "rank " : "ranks ") + runs;
}

// One deadlock of the report's core: its ranks and one cycle through them
// (empty for a report that names the ranks alone).
struct Deadlock {
  std::vector<int> ranks;
  std::vector<int> cycle;
};

// core.cycles; a report written before it was added names one deadlock, in
// core.ranks and core.cycle.
std::vector<Deadlock> deadlocks_of(const ReportJson& core) {
  std::vector<Deadlock> deadlocks;
  if (const auto cycles = core.find("cycles"); cycles != core.end()) {
    for (const ReportJson& deadlock : *cycles) deadlocks.push_back({rank_list(deadlock.at("ranks")), rank_list(deadlock.at("cycle"))});
  } else if (std::vector<int> ranks = rank_list(core.at("ranks")); !ranks.empty()) {
    deadlocks.push_back({std::move(ranks), rank_list(core.at("cycle"))});
  }
  return deadlocks;
}

// A source file's lines, read once per page.
class SourceFiles {
 public:
  // Lines first..last (1-based) that exist; empty when the file is unreadable.
  std::vector<std::pair<int, std::string>> lines(const std::string& path, int first, int last) {
    auto [entry, added] = files_.try_emplace(path);
    if (added) {
      std::ifstream in(path);
      for (std::string line; in && std::getline(in, line);) entry->second.push_back(line);
    }
    std::vector<std::pair<int, std::string>> out;
    for (int number = std::max(first, 1); number <= last && number <= static_cast<int>(entry->second.size()); ++number)
      out.emplace_back(number, entry->second[number - 1]);
    return out;
  }

 private:
  std::map<std::string, std::vector<std::string>> files_;
};

// ---------------------------------------------------------------- the graph

enum class NodeKind { core, behind, culprit, other };

struct Node {
  std::string label;       // inside the node: "3", "…", "ranks 4-9"
  std::vector<int> ranks;  // the ranks it stands for
  NodeKind kind = NodeKind::other;
  int class_index = -1;  // the class its link goes to; -1: none
  double x = 0, y = 0;
  bool on_circle = false;
  int deadlock = -1;  // the deadlock all its ranks are in; -1: none, or several
};

// A deadlock's circle, and its name above it when the report has several.
struct Circle {
  double x = 0, y = 0, radius = 0;
  std::string label;
};

struct Edge {
  std::size_t from, to;
  bool any, possible;
  std::size_t arcs = 0;  // the report's arcs it stands for
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  std::vector<Circle> circles;
  std::vector<std::size_t> circle_of;  // per node on a circle (the first nodes): its index in circles
  double width = 760, height = 0;
};

constexpr double kCircleNodeRadius = 24;
constexpr double kBoxWidth = 130, kBoxHeight = 44, kBoxGap = 16;
constexpr double kRowGap = 60;  // between rows of boxes, room for the arrows
constexpr double kCircleGap = 40;        // between the circles of a row
constexpr double kCircleLabelRoom = 24;  // above a circle, for its name
// The colours of the picture, its arrows and its legend.
constexpr const char* kWaitColor = "#455a64";
constexpr const char* kPossibleColor = "#9e9e9e";
constexpr std::size_t kBoxesPerRow = 5;

// The ranks a deadlock's circle shows, in wait order: its cycle, or, for a
// deadlock named by its ranks alone, those.
std::vector<int> circle_ranks(const Deadlock& deadlock) {
  std::vector<int> circle = deadlock.cycle;
  if (!circle.empty()) circle.pop_back();  // the first rank, repeated at the end
  return circle.empty() ? deadlock.ranks : circle;
}

Graph graph_of(const ReportJson& report, const std::vector<Deadlock>& deadlocks, const std::map<int, int>& class_of_rank) {
  Graph graph;
  std::map<int, int> deadlock_of_rank;
  for (std::size_t i = 0; i < deadlocks.size(); ++i)
    for (int rank : deadlocks[i].ranks) deadlock_of_rank[rank] = static_cast<int>(i);
  const std::vector<int> behind = rank_list(report.at("core").at("blocked_behind"));
  const std::vector<int> culprits = rank_list(report.at("culprits"));
  const auto kind_of = [&](const std::vector<int>& ranks) {
    const auto has_any = [&](const std::vector<int>& set) {
      return std::any_of(ranks.begin(), ranks.end(),
                         [&](int rank) { return std::find(set.begin(), set.end(), rank) != set.end(); });
    };
    if (has_any(culprits)) return NodeKind::culprit;
    if (std::any_of(ranks.begin(), ranks.end(), [&](int rank) { return deadlock_of_rank.contains(rank); }))
      return NodeKind::core;
    if (has_any(behind)) return NodeKind::behind;
    return NodeKind::other;
  };
  // The deadlock every one of `ranks` is in, else -1.
  const auto deadlock_of = [&](const std::vector<int>& ranks) {
    const auto first = deadlock_of_rank.find(ranks.front());
    if (first == deadlock_of_rank.end()) return -1;
    return std::all_of(ranks.begin(), ranks.end(),
                       [&](int rank) {
                         const auto entry = deadlock_of_rank.find(rank);
                         return entry != deadlock_of_rank.end() && entry->second == first->second;
                       })
               ? first->second
               : -1;
  };
  const auto class_of = [&](int rank) {
    const auto entry = class_of_rank.find(rank);
    return entry == class_of_rank.end() ? -1 : entry->second;
  };

  std::map<int, std::size_t> node_of;
  const std::size_t drawn = std::min(deadlocks.size(), kCirclesDrawn);
  for (std::size_t d = 0; d < drawn; ++d) {
    const auto add_circle_node = [&](std::string label, std::vector<int> ranks) {
      for (int rank : ranks) node_of[rank] = graph.nodes.size();
      const int link = class_of(ranks.front());
      graph.nodes.push_back({std::move(label), std::move(ranks), NodeKind::core, link, 0, 0, true, static_cast<int>(d)});
      graph.circle_of.push_back(d);
    };
    const std::vector<int> circle = circle_ranks(deadlocks[d]);
    if (circle.size() <= kCycleShown) {
      for (int rank : circle) add_circle_node(std::to_string(rank), {rank});
    } else {
      for (std::size_t i = 0; i < kCycleEnds; ++i) add_circle_node(std::to_string(circle[i]), {circle[i]});
      add_circle_node("\u2026", std::vector<int>(circle.begin() + kCycleEnds, circle.end() - kCycleEnds));
      for (std::size_t i = circle.size() - kCycleEnds; i < circle.size(); ++i)
        add_circle_node(std::to_string(circle[i]), {circle[i]});
    }
    graph.circles.push_back({0, 0, 0, deadlocks.size() > 1 ? fmt::format("deadlock {}", d + 1) : ""});
  }

  // Every other rank in its class's node; classes past kClassNodes share one.
  const std::size_t circle_nodes = graph.nodes.size();
  std::map<int, std::vector<int>> by_class;  // by class index: the ranks not on a circle
  for (const ReportJson& rank : report.at("ranks")) {
    const int number = rank.at("rank").get<int>();
    if (!node_of.contains(number)) by_class[class_of(number)].push_back(number);
  }
  std::vector<int> rest;
  for (auto& [class_index, ranks] : by_class) {
    if (graph.nodes.size() - circle_nodes + 1 >= kClassNodes) {
      rest.insert(rest.end(), ranks.begin(), ranks.end());
      continue;
    }
    for (int rank : ranks) node_of[rank] = graph.nodes.size();
    const NodeKind kind = kind_of(ranks);
    const int deadlock = deadlock_of(ranks);
    graph.nodes.push_back({ranks.size() == 1 ? "rank " + std::to_string(ranks.front()) : "ranks " + compress_ranks(ranks),
                           std::move(ranks), kind, class_index, 0, 0, false, deadlock});
  }
  if (!rest.empty()) {
    for (int rank : rest) node_of[rank] = graph.nodes.size();
    std::sort(rest.begin(), rest.end());
    const NodeKind kind = kind_of(rest);
    const int deadlock = deadlock_of(rest);
    graph.nodes.push_back({fmt::format("{} more ranks", rest.size()), std::move(rest), kind, -1, 0, 0, false, deadlock});
  }

  // The arcs, one edge per pair of nodes and kind of wait.
  std::map<std::tuple<std::size_t, std::size_t, bool, bool>, std::size_t> edge_of;
  for (const ReportJson& arc : report.at("arcs")) {
    const auto from = node_of.find(arc.at("from").at("rank").get<int>());
    const auto to = node_of.find(arc.at("to").get<int>());
    if (from == node_of.end() || to == node_of.end()) continue;  // a rank the report does not list
    const auto key = std::tuple{from->second, to->second, arc.at("mode").get<std::string>() == "any",
                                arc.at("possible").get<bool>()};
    const auto [entry, added] = edge_of.try_emplace(key, graph.edges.size());
    if (added) graph.edges.push_back({from->second, to->second, std::get<2>(key), std::get<3>(key)});
    ++graph.edges[entry->second].arcs;
  }

  // Layout: the circles in rows on top, side by side while they fit, the
  // class nodes in rows below them.
  std::vector<std::size_t> on_circle(graph.circles.size(), 0);
  for (std::size_t circle : graph.circle_of) ++on_circle[circle];
  double top = 30;
  std::vector<std::size_t> row;  // the circles of the row under way
  const auto place_row = [&] {
    double row_width = -kCircleGap, row_height = 0;
    for (std::size_t c : row) {
      row_width += 2 * (graph.circles[c].radius + kCircleNodeRadius) + kCircleGap;
      row_height = std::max(row_height, 2 * (graph.circles[c].radius + kCircleNodeRadius));
    }
    double left = (graph.width - row_width) / 2;
    const double label_room = graph.circles.size() > 1 ? kCircleLabelRoom : 0;
    for (std::size_t c : row) {
      Circle& circle = graph.circles[c];
      circle.x = left + circle.radius + kCircleNodeRadius;
      circle.y = top + label_room + row_height / 2;
      left += 2 * (circle.radius + kCircleNodeRadius) + kCircleGap;
    }
    top += label_room + row_height + 30;
    row.clear();
  };
  double row_width = 0;
  for (std::size_t c = 0; c < graph.circles.size(); ++c) {
    graph.circles[c].radius = std::max(70.0, on_circle[c] * 2.6 * kCircleNodeRadius / (2 * M_PI));
    const double width = 2 * (graph.circles[c].radius + kCircleNodeRadius);
    if (!row.empty() && row_width + kCircleGap + width > graph.width) {
      place_row();
      row_width = 0;
    }
    row_width += (row.empty() ? 0 : kCircleGap) + width;
    row.push_back(c);
  }
  if (!row.empty()) place_row();
  std::vector<std::size_t> placed(graph.circles.size(), 0);
  for (std::size_t i = 0; i < circle_nodes; ++i) {
    const Circle& circle = graph.circles[graph.circle_of[i]];
    const std::size_t count = on_circle[graph.circle_of[i]];
    // Clockwise from the top, in wait order.
    const double angle = -M_PI / 2 + 2 * M_PI * placed[graph.circle_of[i]]++ / count;
    graph.nodes[i].x = circle.x + circle.radius * std::cos(angle);
    graph.nodes[i].y = circle.y + circle.radius * std::sin(angle);
  }
  if (!graph.circles.empty()) top += 20;
  const std::size_t boxes = graph.nodes.size() - circle_nodes;
  for (std::size_t i = 0; i < boxes; ++i) {
    const std::size_t box_row = i / kBoxesPerRow, column = i % kBoxesPerRow;
    const std::size_t in_row = std::min(kBoxesPerRow, boxes - box_row * kBoxesPerRow);
    const double boxes_width = in_row * kBoxWidth + (in_row - 1) * kBoxGap;
    Node& node = graph.nodes[circle_nodes + i];
    node.x = (graph.width - boxes_width) / 2 + column * (kBoxWidth + kBoxGap) + kBoxWidth / 2;
    node.y = top + box_row * (kBoxHeight + kRowGap) + kBoxHeight / 2;
  }
  graph.height = boxes == 0 ? top : top + ((boxes - 1) / kBoxesPerRow) * (kBoxHeight + kRowGap) + kBoxHeight + 30;
  return graph;
}

const char* fill_of(NodeKind kind) {
  switch (kind) {
    case NodeKind::core: return "#d32f2f";
    case NodeKind::behind: return "#f57c00";
    case NodeKind::culprit: return "#7b1fa2";
    case NodeKind::other: return "#78909c";
  }
  return "#78909c";
}

// Where the edge leaves or reaches `node`, on the way to (toward_x, toward_y).
std::pair<double, double> border_point(const Node& node, double toward_x, double toward_y) {
  const double dx = toward_x - node.x, dy = toward_y - node.y;
  const double length = std::max(std::hypot(dx, dy), 1e-9);
  if (node.on_circle) return {node.x + dx / length * kCircleNodeRadius, node.y + dy / length * kCircleNodeRadius};
  // The box's border: scale to the nearer of its half width and half height.
  const double scale = std::min(kBoxWidth / 2 / std::max(std::abs(dx), 1e-9), kBoxHeight / 2 / std::max(std::abs(dy), 1e-9));
  return {node.x + dx * std::min(scale, 1.0), node.y + dy * std::min(scale, 1.0)};
}

std::string svg_of(const Graph& graph) {
  std::string svg = fmt::format(
      R"(<svg xmlns="http://www.w3.org/2000/svg" id="wait-for-graph" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
      R"(role="img" aria-label="wait-for graph">)"
      "\n<defs>",
      graph.width, graph.height);
  for (const auto& [id, color] : {std::pair{"core", fill_of(NodeKind::core)}, std::pair{"wait", kWaitColor},
                                  std::pair{"possible", kPossibleColor}})
    svg += fmt::format(R"(<marker id="arrow-{}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" )"
                       R"(orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{}"/></marker>)",
                       id, color);
  svg += "</defs>\n";
  for (const Edge& edge : graph.edges) {
    const Node& from = graph.nodes[edge.from];
    const Node& to = graph.nodes[edge.to];
    const bool core = from.deadlock >= 0 && from.deadlock == to.deadlock && !edge.possible;
    const char* kind = edge.possible ? "possible" : core ? "core" : "wait";
    const char* color = edge.possible ? kPossibleColor : core ? fill_of(NodeKind::core) : kWaitColor;
    const char* dashes = edge.possible ? R"( stroke-dasharray="2 4")" : edge.any ? R"( stroke-dasharray="7 4")" : "";
    const std::string title = fmt::format("<title>{} {} {} ({} arc{}){}</title>", escaped(ranks_text(from.ranks)),
                                          edge.possible ? "possibly waits for" : "waits for", escaped(ranks_text(to.ranks)), edge.arcs,
                                          edge.arcs == 1 ? "" : "s", edge.any ? ", any one of them is enough (OR)" : "");
    std::string path;
    if (edge.from == edge.to) {
      // Ranks of one node wait for each other: a loop away from the circle's
      // center, or above a box.
      double out_x = 0, out_y = -1;
      if (from.on_circle) {
        const Circle& circle = graph.circles[graph.circle_of[edge.from]];
        const double length = std::max(std::hypot(from.x - circle.x, from.y - circle.y), 1e-9);
        out_x = (from.x - circle.x) / length;
        out_y = (from.y - circle.y) / length;
      }
      const double reach = from.on_circle ? kCircleNodeRadius : kBoxHeight / 2;
      const double base_x = from.x + out_x * reach, base_y = from.y + out_y * reach;
      // Across the outward direction, and far along it.
      const double across_x = -out_y, across_y = out_x;
      path = fmt::format("M{:.1f},{:.1f} C{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}", base_x - across_x * 10,
                         base_y - across_y * 10, base_x + out_x * 40 - across_x * 30, base_y + out_y * 40 - across_y * 30,
                         base_x + out_x * 40 + across_x * 30, base_y + out_y * 40 + across_y * 30,
                         base_x + across_x * 10, base_y + across_y * 10);
    } else {
      // A slight bend to the right of the direction of travel keeps A->B and B->A apart.
      const double mid_x = (from.x + to.x) / 2, mid_y = (from.y + to.y) / 2;
      const double dx = to.x - from.x, dy = to.y - from.y;
      const double length = std::max(std::hypot(dx, dy), 1e-9);
      const double bend = std::min(30.0, length / 5);
      const double control_x = mid_x - dy / length * bend, control_y = mid_y + dx / length * bend;
      const auto [start_x, start_y] = border_point(from, control_x, control_y);
      const auto [end_x, end_y] = border_point(to, control_x, control_y);
      path = fmt::format("M{:.1f},{:.1f} Q{:.1f},{:.1f} {:.1f},{:.1f}", start_x, start_y, control_x, control_y, end_x,
                         end_y);
    }
    svg += fmt::format(R"~(<path class="edge edge-{}" d="{}" fill="none" stroke="{}" stroke-width="{}"{} )~"
                       R"~(marker-end="url(#arrow-{})">{}</path>)~"
                       "\n",
                       kind, path, color, core ? 2.5 : 1.6, dashes, kind, title);
  }
  for (const Circle& circle : graph.circles)
    if (!circle.label.empty())
      svg += fmt::format(R"(<text class="deadlock-name" x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="{}" )"
                         R"(font-weight="bold">{}</text>)"
                         "\n",
                         circle.x, circle.y - circle.radius - kCircleNodeRadius - 8, fill_of(NodeKind::core),
                         escaped(circle.label));
  for (const Node& node : graph.nodes) {
    const std::string title = fmt::format("<title>{}</title>", escaped(ranks_text(node.ranks)));
    std::string shape;
    if (node.on_circle) {
      shape = fmt::format(R"(<circle class="node node-{}" cx="{:.1f}" cy="{:.1f}" r="{}" fill="{}"/>)"
                          R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" dominant-baseline="central" )"
                          R"(fill="#fff" font-weight="bold">{}</text>)",
                          node.kind == NodeKind::core ? "core" : "other", node.x, node.y, kCircleNodeRadius,
                          fill_of(node.kind), node.x, node.y, escaped(node.label));
    } else {
      // A long rank list is cut to the box; the title holds it whole.
      std::string label = node.label.size() > 18 ? node.label.substr(0, 17) + "\u2026" : node.label;
      shape = fmt::format(R"(<rect class="node" x="{:.1f}" y="{:.1f}" width="{}" height="{}" rx="8" fill="{}"/>)"
                          R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#fff">{}</text>)"
                          R"(<text x="{:.1f}" y="{:.1f}" text-anchor="middle" fill="#fff" font-size="11">{}</text>)",
                          node.x - kBoxWidth / 2, node.y - kBoxHeight / 2, kBoxWidth, kBoxHeight, fill_of(node.kind),
                          node.x, node.y - 3, escaped(label), node.x, node.y + 13,
                          node.ranks.size() == 1 ? "1 rank" : fmt::format("{} ranks", node.ranks.size()));
    }
    svg += node.class_index >= 0
               ? fmt::format(R"(<a href="#class-{}">{}{}</a>)", node.class_index, title, shape)
               : "<g>" + title + shape + "</g>";
    svg += '\n';
  }
  return svg + "</svg>\n";
}

// ---------------------------------------------------------------- the stack tree

// STAT's merged stack tree: every class's threads from the outermost frame
// to the call, frames that several classes share merged into one node, each
// node with the ranks that pass through it. A frame is its function, file and
// line: ranks that called on from different lines of main part there.
struct TreeNode {
  std::string key;                  // what merges a frame with a sibling's; empty for a call
  std::string html;                 // the node's line
  std::vector<int> ranks;           // sorted
  std::vector<std::size_t> children;
  std::size_t to_call = 0;          // the fewest frames from it down to a call
};

std::string frame_place(const ReportJson& frame) {
  const std::string file = frame.at("file").get<std::string>();
  if (file.empty()) return escaped(frame.at("module").get<std::string>());
  const int line = frame.at("line").get<int>();
  return line > 0 ? fmt::format("{}:{}", escaped(file), line) : escaped(file);
}

std::string frame_html(const ReportJson& frame) {
  return fmt::format("<code>{}</code> <span class=\"at\">{}</span>", escaped(frame.at("function").get<std::string>()),
                     frame_place(frame));
}

// What the ranks of a class share with the deadlocks, as a badge before their
// call: "deadlock 2", or being blocked behind them, or outside MPI and waited
// for; empty for none.
struct Standing {
  std::map<int, int> deadlock_of_rank;
  std::size_t deadlocks = 0;
  std::vector<int> behind, culprits;  // sorted

  std::string badge_html(const std::vector<int>& ranks) const {
    std::set<int> in;
    for (int rank : ranks)
      if (const auto entry = deadlock_of_rank.find(rank); entry != deadlock_of_rank.end()) in.insert(entry->second + 1);
    const auto has_any = [&](const std::vector<int>& set) {
      return std::any_of(ranks.begin(), ranks.end(), [&](int rank) { return std::binary_search(set.begin(), set.end(), rank); });
    };
    const auto badge = [](NodeKind kind, const std::string& text) {
      return fmt::format("<span class=\"badge\" style=\"background:{}\">{}</span> ", fill_of(kind), text);
    };
    if (has_any(culprits)) return badge(NodeKind::culprit, "outside MPI, waited for");
    if (!in.empty()) {
      if (deadlocks == 1) return badge(NodeKind::core, "deadlocked");
      std::string numbers;
      for (int number : in) numbers += (numbers.empty() ? "" : ", ") + std::to_string(number);
      return badge(NodeKind::core, (in.size() == 1 ? "deadlock " : "deadlocks ") + numbers);
    }
    if (has_any(behind)) return badge(NodeKind::behind, "blocked behind");
    return {};
  }
};

// The line of a class's thread where its path ends: its call (each rank's
// own when their arguments differ: the representative's, named), or what it
// does outside MPI.
std::string call_line_html(const ReportJson& rank, const ReportJson& thread, const std::vector<int>& ranks,
                           const std::map<int, const ReportJson*>& rank_entry) {
  const std::string thread_label =
      rank.at("threads").size() > 1 ? fmt::format("thread {}: ", thread.at("id").get<int>()) : "";
  if (!rank.at("exit_status").is_null())
    return fmt::format("{}exited with status {} without MPI_Finalize", thread_label, rank.at("exit_status").get<int>());
  if (thread.at("state").get<std::string>() == "running") return thread_label + "running outside MPI";
  const std::string call = thread.at("call").get<std::string>();
  const std::string shown = call.empty() ? thread.at("function").get<std::string>() : call;
  const bool same_calls = std::all_of(ranks.begin(), ranks.end(), [&](int member) {
    const auto entry = rank_entry.find(member);
    if (entry == rank_entry.end()) return true;
    for (const ReportJson& theirs : entry->second->at("threads"))
      if (theirs.at("id") == thread.at("id")) return theirs.at("call") == thread.at("call");
    return true;
  });
  const std::string whose = same_calls || ranks.size() == 1 ? "" : fmt::format("[{}] ", rank.at("rank").get<int>());
  return fmt::format("{}<code class=\"call\">{}{}</code>", thread_label, whose, escaped(shown));
}

class StackTree {
 public:
  StackTree() : nodes_(1) {}  // the root, which is not drawn

  // The path of one thread of a class: its frames from the outermost, then its call.
  void add(const ReportJson& stack, const std::vector<int>& ranks, std::string call_html) {
    std::size_t at = 0;
    for (auto frame = stack.rbegin(); frame != stack.rend(); ++frame) {
      const std::string key = frame->at("function").get<std::string>() + '\n' + frame_place(*frame);
      at = child(at, key, frame_html(*frame));
      add_ranks(at, ranks);
    }
    const std::size_t call = nodes_.size();
    nodes_.push_back({"", std::move(call_html), ranks, {}, 0});
    nodes_[at].children.push_back(call);
  }

  std::string html() {
    for (std::size_t node = nodes_.size(); node-- > 0;) {  // children come after their parents
      std::sort(nodes_[node].ranks.begin(), nodes_[node].ranks.end());
      nodes_[node].ranks.erase(std::unique(nodes_[node].ranks.begin(), nodes_[node].ranks.end()), nodes_[node].ranks.end());
      if (nodes_[node].children.empty()) continue;
      nodes_[node].to_call = std::numeric_limits<std::size_t>::max();
      for (std::size_t child : nodes_[node].children)
        nodes_[node].to_call = std::min(nodes_[node].to_call, nodes_[child].to_call + 1);
    }
    std::string out = "<ul class=\"tree\">\n";
    for (std::size_t child : nodes_.front().children) out += item(child);
    return out + "</ul>\n";
  }

 private:
  std::size_t child(std::size_t parent, const std::string& key, std::string html) {
    for (std::size_t existing : nodes_[parent].children)
      if (nodes_[existing].key == key) return existing;
    nodes_.push_back({key, std::move(html), {}, {}, 0});
    nodes_[parent].children.push_back(nodes_.size() - 1);
    return nodes_.size() - 1;
  }

  void add_ranks(std::size_t node, const std::vector<int>& ranks) {
    nodes_[node].ranks.insert(nodes_[node].ranks.end(), ranks.begin(), ranks.end());
  }

  // Shown: a call, a frame where paths part, and the innermost frames above a call.
  bool shown(std::size_t node) const {
    return nodes_[node].children.size() != 1 || nodes_[node].to_call <= kInnermostFrames;
  }

  std::string ranks_html(std::size_t node) const {
    return " <span class=\"tree-ranks\">" + escaped(ranks_text(nodes_[node].ranks)) + "</span>";
  }

  // The node's line and its subtree; a run of frames not shown is one folded line.
  std::string item(std::size_t node) const {
    if (!shown(node)) {
      std::string frames;
      std::size_t folded = 0;
      for (; !shown(node); node = nodes_[node].children.front(), ++folded) frames += "<li>" + nodes_[node].html + "</li>";
      return fmt::format("<li><details class=\"outer\"><summary>{} outer frame{}{}</summary><ol class=\"stack\">{}</ol>"
                         "</details>\n<ul>\n{}</ul></li>\n",
                         folded, folded == 1 ? "" : "s", ranks_html(node), frames, item(node));
    }
    std::string out = "<li>" + nodes_[node].html + ranks_html(node);
    if (!nodes_[node].children.empty()) {
      out += "\n<ul>\n";
      for (std::size_t child : nodes_[node].children) out += item(child);
      out += "</ul>";
    }
    return out + "</li>\n";
  }

  std::vector<TreeNode> nodes_;
};

// The tree of the first kClassNodes classes; each call links to its class.
std::string tree_html(const ReportJson& classes, const std::map<int, const ReportJson*>& rank_entry, const Standing& standing) {
  StackTree tree;
  const std::size_t shown = std::min(classes.size(), kClassNodes);
  for (std::size_t i = 0; i < shown; ++i) {
    const std::vector<int> ranks = rank_list(classes[i].at("rank_list"));
    const auto entry = rank_entry.find(classes[i].at("representative").get<int>());
    if (entry == rank_entry.end()) continue;
    const ReportJson& rank = *entry->second;
    const std::string badge = standing.badge_html(ranks);
    if (rank.at("threads").empty())
      tree.add(ReportJson::array(), ranks, fmt::format("{}<a href=\"#class-{}\">no stack: the rank did not answer</a>", badge, i));
    for (const ReportJson& thread : rank.at("threads"))
      tree.add(thread.at("stack"), ranks,
               fmt::format("{}<a href=\"#class-{}\">{}</a>", badge, i, call_line_html(rank, thread, ranks, rank_entry)));
  }
  std::string html = tree.html();
  if (classes.size() > shown) html += fmt::format("<p>{} more classes are listed below.</p>\n", classes.size() - shown);
  return html;
}

// ---------------------------------------------------------------- the page

constexpr std::string_view kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 60em; color: #212121; }
h1 { font-size: 1.4em; margin-bottom: .2em; }
.badge { display: inline-block; padding: .1em .5em; border-radius: .3em; color: #fff; font-size: .8em; }
.error { background: #d32f2f; } .warning { background: #f57c00; } .info { background: #1976d2; }
.rule { background: #f5f5f5; border-left: 4px solid #9e9e9e; padding: .5em .8em; }
.legend > span { margin-right: 1.2em; white-space: nowrap; }
.swatch { display: inline-block; width: .9em; height: .9em; border-radius: 50%; vertical-align: middle; }
figure { margin: 1em 0; overflow-x: auto; }
section.class { border-top: 1px solid #e0e0e0; padding-top: .4em; }
code, pre { font-family: ui-monospace, monospace; font-size: .9em; }
.call { white-space: pre-wrap; overflow-wrap: anywhere; }
details { margin: .3em 0 .3em 1em; } summary { cursor: pointer; color: #1565c0; }
ol.stack { margin: .3em 0; padding-left: 1.6em; }
pre.source { background: #fafafa; border: 1px solid #eee; margin: .2em 0 .6em; padding: .3em .5em; overflow-x: auto; }
pre.source b { background: #fff59d; font-weight: normal; }
footer { margin-top: 2em; color: #757575; font-size: .85em; }
p.deadlock { color: #b71c1c; font-weight: bold; }
ul.tree, ul.tree ul { list-style: none; margin: 0; }
ul.tree { padding-left: 0; }
ul.tree ul { border-left: 1px solid #bdbdbd; margin-left: .5em; padding-left: 1.1em; }
ul.tree li { margin: .2em 0; }
ul.tree a { color: inherit; }
.at { background: #e8f5e9; padding: 0 .3em; border-radius: .2em; font-family: ui-monospace, monospace; font-size: .9em; }
.tree-ranks { color: #1565c0; font-size: .9em; margin-left: .4em; }
details.outer { display: inline-block; margin: 0; }
)";

std::string frames_html(const ReportJson& stack, SourceFiles& sources) {
  std::string html = "<ol class=\"stack\">\n";
  for (const ReportJson& frame : stack) {
    const std::string file = frame.at("file").get<std::string>();
    const int line = frame.at("line").get<int>();
    html += "<li><code>" + escaped(frame.at("function").get<std::string>()) + "</code>";
    if (!file.empty()) html += fmt::format(" <code>({}:{})</code>", escaped(file), line);
    else html += " <code>(" + escaped(frame.at("module").get<std::string>()) + ")</code>";
    if (!file.empty() && line > 0) {
      const auto lines = sources.lines(file, line - kSourceContext, line + kSourceContext);
      if (!lines.empty()) {
        html += "<pre class=\"source\">";
        for (const auto& [number, text] : lines) {
          const std::string shown = fmt::format("{:5} {}", number, escaped(text));
          html += number == line ? "<b>" + shown + "</b>\n" : shown + "\n";
        }
        html += "</pre>";
      }
    }
    html += "</li>\n";
  }
  return html + "</ol>\n";
}

std::string thread_html(const ReportJson& thread, SourceFiles& sources, int rank) {
  std::string html = fmt::format("<p>thread {}: {}, {:.1f} s", thread.at("id").get<int>(),
                                 escaped(thread.at("state").get<std::string>()),
                                 thread.at("seconds").is_number() ? thread.at("seconds").get<double>() : 0.0);
  // The reason names the ranks waited for; without one, the ranks are given.
  const std::string reason = thread.at("wait_reason").get<std::string>();
  const std::string waits = runs_text(thread.at("waits_for"));
  if (!reason.empty())
    html += " &mdash; " + escaped(reason);
  else if (!waits.empty())
    html += fmt::format(" &mdash; waits for {}{}", thread.at("wait_mode").get<std::string>() == "any" ? "any one of " : "",
                        escaped(ranks_of_runs(waits)));
  const std::string possibly = runs_text(thread.at("possibly_waits_for"));
  if (!possibly.empty()) html += " &mdash; possibly waits for " + escaped(ranks_of_runs(possibly));
  html += "</p>\n";
  const ReportJson& stack = thread.at("stack");
  if (!stack.empty())
    html += fmt::format("<details><summary>stack of rank {}, thread {} ({} frame{})</summary>\n{}</details>\n", rank,
                        thread.at("id").get<int>(), stack.size(), stack.size() == 1 ? "" : "s",
                        frames_html(stack, sources));
  return html;
}

std::string class_html(const ReportJson& rank_class, int index, const std::map<int, const ReportJson*>& rank_entry,
                       SourceFiles& sources) {
  const std::vector<int> ranks = rank_list(rank_class.at("rank_list"));
  const int representative = rank_class.at("representative").get<int>();
  std::string hosts;
  for (const ReportJson& host : rank_class.at("hosts"))
    hosts += (hosts.empty() ? "" : "; ") + fmt::format("{}: ranks {}", escaped(host.at("host").get<std::string>()),
                                                       escaped(host.at("ranks").get<std::string>()));
  std::string html = fmt::format("<section class=\"class\" id=\"class-{}\">\n<h3>{}</h3>\n<p>where: {}</p>\n", index,
                                 escaped(ranks_text(ranks)), hosts);
  const auto entry = rank_entry.find(representative);
  if (entry == rank_entry.end()) return html + "</section>\n";
  const ReportJson& rank = *entry->second;
  html += fmt::format("<p>state: {}", escaped(rank.at("state").get<std::string>()));
  if (!rank.at("exit_status").is_null()) html += fmt::format(", exiting with status {}", rank.at("exit_status").get<int>());
  html += "</p>\n<ul>\n";
  // Each rank's calls (their arguments differ within a class).
  const std::size_t listed = ranks.size() <= kCallsListed ? ranks.size() : 1;
  for (std::size_t i = 0; i < listed; ++i) {
    const auto member = rank_entry.find(ranks[i]);
    if (member == rank_entry.end()) continue;
    for (const ReportJson& thread : member->second->at("threads")) {
      const std::string call = thread.at("call").get<std::string>();
      if (call.empty()) continue;
      html += fmt::format("<li><code class=\"call\">[{}{}] {}</code></li>\n", ranks[i],
                          member->second->at("threads").size() > 1 ? fmt::format(" thread {}", thread.at("id").get<int>()) : "",
                          escaped(call));
    }
  }
  if (listed < ranks.size())
    html += fmt::format("<li>and {} more ranks, in the same calls with their own arguments</li>\n", ranks.size() - 1);
  html += "</ul>\n";
  for (const ReportJson& thread : rank.at("threads")) html += thread_html(thread, sources, representative);
  return html + "</section>\n";
}

// "rank 0 &rarr; rank 1 &rarr; rank 0", folded as the graph folds it; the
// last rank is the first again.
std::string cycle_html(const std::vector<int>& cycle) {
  std::string text;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    const bool folded = cycle.size() - 1 > kCycleShown && i >= kCycleEnds && i + kCycleEnds < cycle.size() - 1;
    if (folded && i == kCycleEnds) text += fmt::format(" &rarr; &hellip; {} ranks &hellip;", cycle.size() - 1 - 2 * kCycleEnds);
    if (!folded) text += (text.empty() ? "" : " &rarr; ") + fmt::format("rank {}", cycle[i]);
  }
  return text;
}

// A line per deadlock, numbered when there are several; past
// kDeadlocksListed, one line counts the rest.
std::string deadlocks_html(const std::vector<Deadlock>& deadlocks) {
  std::string html;
  const std::size_t listed = std::min(deadlocks.size(), kDeadlocksListed);
  for (std::size_t i = 0; i < listed; ++i) {
    const Deadlock& deadlock = deadlocks[i];
    const std::string name = deadlocks.size() > 1 ? fmt::format("deadlock {}", i + 1) : "deadlock";
    if (deadlock.cycle.empty()) {
      html += fmt::format("<p class=\"deadlock\">{} among {}, each waiting for any one of the others</p>\n", name,
                          escaped(ranks_text(deadlock.ranks)));
      continue;
    }
    std::vector<int> on_cycle = deadlock.cycle, off_cycle;
    std::sort(on_cycle.begin(), on_cycle.end());
    std::set_difference(deadlock.ranks.begin(), deadlock.ranks.end(), on_cycle.begin(), on_cycle.end(),
                        std::back_inserter(off_cycle));
    const std::string others = off_cycle.empty() ? ""
                                                 : fmt::format(", and {} on other cycles among {}",
                                                               escaped(ranks_text(off_cycle)), escaped(ranks_text(deadlock.ranks)));
    html += fmt::format("<p class=\"deadlock\">{}: {}{}</p>\n", name, cycle_html(deadlock.cycle), others);
  }
  if (deadlocks.size() > listed) {
    std::vector<int> rest;
    for (std::size_t i = listed; i < deadlocks.size(); ++i)
      rest.insert(rest.end(), deadlocks[i].ranks.begin(), deadlocks[i].ranks.end());
    std::sort(rest.begin(), rest.end());
    html += fmt::format("<p class=\"deadlock\">&hellip; and {} more deadlocks, among {}</p>\n", deadlocks.size() - listed,
                        escaped(ranks_text(rest)));
  }
  return html;
}

std::string page(const ReportJson& report, std::string_view title) {
  const std::string check = report.at("check").get<std::string>();
  const std::string severity = report.at("severity").get<std::string>();
  std::map<int, const ReportJson*> rank_entry;
  for (const ReportJson& rank : report.at("ranks")) rank_entry[rank.at("rank").get<int>()] = &rank;
  std::map<int, int> class_of_rank;
  const ReportJson& classes = report.at("classes");
  for (std::size_t i = 0; i < classes.size(); ++i)
    for (int rank : rank_list(classes[i].at("rank_list"))) class_of_rank[rank] = static_cast<int>(i);

  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
      "<title>{} &mdash; mpisentry</title>\n<style>{}</style>\n</head>\n<body>\n"
      "<h1>{} <span class=\"badge {}\">{}</span></h1>\n",
      escaped(check), kStyle, escaped(check), escaped(severity), escaped(severity));
  const std::string key = report.at("threshold_key").get<std::string>();
  if (report.value("proven_at_once", false))
    html += "<p>proven in two looks, without waiting for a timeout (DEADLOCK-TIMEOUT auto)</p>\n";
  else if (!key.empty())
    html += fmt::format("<p>after {:g} s without progress ({})</p>\n", report.at("threshold_seconds").get<double>(),
                        escaped(key));
  if (!report.at("signal").is_null()) html += "<p>signal: " + escaped(report.at("signal").get<std::string>()) + "</p>\n";
  const std::string rule = report.at("rule").get<std::string>();
  if (!rule.empty()) html += "<p class=\"rule\">rule: " + escaped(rule) + "</p>\n";
  const std::vector<Deadlock> deadlocks = deadlocks_of(report.at("core"));
  html += deadlocks_html(deadlocks);
  const std::vector<int> behind = rank_list(report.at("core").at("blocked_behind"));
  if (!behind.empty())
    html += fmt::format("<p>blocked behind the deadlock{}: {}</p>\n", deadlocks.size() > 1 ? "s" : "",
                        escaped(ranks_text(behind)));
  if (report.at("partial").get<bool>()) html += "<p>the other ranks still run</p>\n";
  if (const std::vector<int> waiting = rank_list(report.at("waiting")); !waiting.empty())
    html += fmt::format("<p>{} wait for {}, outside MPI</p>\n", escaped(ranks_text(waiting)),
                        escaped(ranks_text(rank_list(report.at("culprits")))));

  Standing standing{{}, deadlocks.size(), behind, rank_list(report.at("culprits"))};
  for (std::size_t i = 0; i < deadlocks.size(); ++i)
    for (int rank : deadlocks[i].ranks) standing.deadlock_of_rank[rank] = static_cast<int>(i);
  std::sort(standing.behind.begin(), standing.behind.end());
  std::sort(standing.culprits.begin(), standing.culprits.end());
  html += "<h2>Where the ranks are</h2>\n" + tree_html(classes, rank_entry, standing);

  const Graph graph = graph_of(report, deadlocks, class_of_rank);
  html += "<h2>Who waits for whom</h2>\n<figure>\n" + svg_of(graph) + "</figure>\n";
  html += "<p class=\"legend\">";
  for (const auto& [kind, meaning] : {std::pair{NodeKind::core, "deadlocked"},
                                      std::pair{NodeKind::behind, deadlocks.size() > 1 ? "blocked behind the deadlocks"
                                                                                       : "blocked behind the deadlock"},
                                      std::pair{NodeKind::culprit, "outside MPI, waited for"},
                                      std::pair{NodeKind::other, "other ranks, by class"}})
    html += fmt::format("<span><span class=\"swatch\" style=\"background:{}\"></span> {}</span>", fill_of(kind), meaning);
  html += fmt::format("<span>&rarr; waits for (AND)</span><span>&#8674; waits for any one (OR)</span>"
                      "<span style=\"color:{}\">&middot;&middot;&rsaquo; possibly waits for</span></p>\n",
                      kPossibleColor);
  if (const std::size_t left_out = report.at("arcs_left_out").get<std::size_t>(); left_out > 0)
    html += fmt::format("<p>{} more arcs are not in the report and not drawn.</p>\n", left_out);

  html += "<h2>Ranks</h2>\n";
  SourceFiles sources;
  for (std::size_t i = 0; i < classes.size(); ++i) html += class_html(classes[i], static_cast<int>(i), rank_entry, sources);
  html += fmt::format("<footer>made by mpisentry from {}</footer>\n</body>\n</html>\n", escaped(title));
  return html;
}

}  // namespace

std::string format_html(std::string_view json, std::string_view title) {
  const ReportJson report = parse(json);
  check_schema(report);
  try {
    return page(report, title);
  } catch (const ReportJson::exception& error) {
    const std::string what = error.what();
    throw BadReport("not an mpisentry report: " + what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
  }
}

}  // namespace mpisentry::report
