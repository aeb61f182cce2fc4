// The page is drawn from the JSON report alone, so that a report copied off
// a cluster can be turned into a page anywhere. The wait-for graph stays
// readable at any number of ranks: the ranks of the deadlock's cycle (at most
// kCycleShown of them, the middle of a longer cycle folded into one node) sit
// on a circle, and every other rank is in the node of its class (ranks that
// print the same), at most kClassNodes of them.
// nlohmann's diagnostics put the path of a missing or mistyped key into its
// messages ("(/ranks/3) key 'pid' not found"), which BadReport passes on.
#define JSON_DIAGNOSTICS 1
#include "report/html.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kSchema = "mpisentry-report/5";
constexpr std::size_t kCycleShown = 12;   // a longer cycle shows its first and last kCycleEnds
constexpr std::size_t kCycleEnds = 5;
constexpr std::size_t kClassNodes = 24;  // more classes share one last node
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

Json parse(std::string_view text) {
  try {
    return Json::parse(text);
  } catch (const Json::parse_error& error) {
    if (error.byte >= text.size())
      throw BadReport(fmt::format("truncated: the JSON stops after {} bytes, before the report is complete (was "
                                  "the job ended while it wrote the report?)",
                                  text.size()));
    const std::string what = error.what();
    throw BadReport("not JSON: " + what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
  }
}

void check_schema(const Json& report) {
  if (!report.is_object()) throw BadReport("not an mpisentry report: the JSON is not an object");
  const auto schema = report.find("schema");
  if (schema == report.end() || !schema->is_string())
    throw BadReport("not an mpisentry report: it has no \"schema\" naming mpisentry-report/5");
  if (schema->get<std::string>() != kSchema)
    throw BadReport(fmt::format("schema \"{}\": this mpisentry reads {}; make the page with the mpisentry that "
                                "wrote the report",
                                schema->get<std::string>(), kSchema));
}

std::vector<int> rank_list(const Json& ranks) { return ranks.get<std::vector<int>>(); }

std::string runs_text(const Json& runs) {
  std::string text;
  for (const Json& run : runs) {
    const int first = run.at(0).get<int>(), last = run.at(1).get<int>();
    text += (text.empty() ? "" : ",") + (first == last ? std::to_string(first) : fmt::format("{}-{}", first, last));
  }
  return text;
}

// "rank 3" or "ranks 0-2,5", from runs_text's "3" or "0-2,5".
std::string ranks_of_runs(const std::string& runs) {
  return (runs.find_first_of(",-") == std::string::npos ? "rank " : "ranks ") + runs;
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
};

struct Edge {
  std::size_t from, to;
  bool any, possible;
  std::size_t arcs = 0;  // the report's arcs it stands for
};

struct Graph {
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  double width = 760, height = 0;
  double center_x = 0, center_y = 0;  // of the circle
};

constexpr double kCircleNodeRadius = 24;
constexpr double kBoxWidth = 130, kBoxHeight = 44, kBoxGap = 16;
constexpr double kRowGap = 60;  // between rows of boxes, room for the arrows
// The colours of the picture, its arrows and its legend.
constexpr const char* kWaitColor = "#455a64";
constexpr const char* kPossibleColor = "#9e9e9e";
constexpr std::size_t kBoxesPerRow = 5;

Graph graph_of(const Json& report, const std::map<int, int>& class_of_rank) {
  Graph graph;
  const Json& core = report.at("core");
  std::vector<int> circle = rank_list(core.at("cycle"));
  if (!circle.empty()) circle.pop_back();  // the first rank, repeated at the end
  if (circle.empty()) circle = rank_list(core.at("ranks"));  // an OR knot has no one cycle
  const std::vector<int> behind = rank_list(core.at("blocked_behind"));
  const std::vector<int> culprits = rank_list(report.at("culprits"));
  const auto kind_of = [&](const std::vector<int>& ranks) {
    const auto has_any = [&](const std::vector<int>& set) {
      return std::any_of(ranks.begin(), ranks.end(),
                         [&](int rank) { return std::find(set.begin(), set.end(), rank) != set.end(); });
    };
    if (has_any(culprits)) return NodeKind::culprit;
    if (has_any(behind)) return NodeKind::behind;
    return NodeKind::other;
  };
  const auto class_of = [&](int rank) {
    const auto entry = class_of_rank.find(rank);
    return entry == class_of_rank.end() ? -1 : entry->second;
  };

  std::map<int, std::size_t> node_of;
  const auto add_circle_node = [&](std::string label, std::vector<int> ranks) {
    for (int rank : ranks) node_of[rank] = graph.nodes.size();
    const int link = class_of(ranks.front());
    graph.nodes.push_back({std::move(label), std::move(ranks), NodeKind::core, link, 0, 0, true});
  };
  if (circle.size() <= kCycleShown) {
    for (int rank : circle) add_circle_node(std::to_string(rank), {rank});
  } else {
    for (std::size_t i = 0; i < kCycleEnds; ++i) add_circle_node(std::to_string(circle[i]), {circle[i]});
    add_circle_node("\u2026", std::vector<int>(circle.begin() + kCycleEnds, circle.end() - kCycleEnds));
    for (std::size_t i = circle.size() - kCycleEnds; i < circle.size(); ++i)
      add_circle_node(std::to_string(circle[i]), {circle[i]});
  }

  // Every other rank in its class's node; classes past kClassNodes share one.
  const std::size_t circle_nodes = graph.nodes.size();
  std::map<int, std::vector<int>> by_class;  // by class index: the ranks not on the circle
  for (const Json& rank : report.at("ranks")) {
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
    graph.nodes.push_back({ranks.size() == 1 ? "rank " + std::to_string(ranks.front()) : "ranks " + compress_ranks(ranks),
                           std::move(ranks), kind, class_index});
  }
  if (!rest.empty()) {
    for (int rank : rest) node_of[rank] = graph.nodes.size();
    std::sort(rest.begin(), rest.end());
    const NodeKind kind = kind_of(rest);
    graph.nodes.push_back({fmt::format("{} more ranks", rest.size()), std::move(rest), kind, -1});
  }

  // The arcs, one edge per pair of nodes and kind of wait.
  std::map<std::tuple<std::size_t, std::size_t, bool, bool>, std::size_t> edge_of;
  for (const Json& arc : report.at("arcs")) {
    const auto from = node_of.find(arc.at("from").at("rank").get<int>());
    const auto to = node_of.find(arc.at("to").get<int>());
    if (from == node_of.end() || to == node_of.end()) continue;  // a rank the report does not list
    const auto key = std::tuple{from->second, to->second, arc.at("mode").get<std::string>() == "any",
                                arc.at("possible").get<bool>()};
    const auto [entry, added] = edge_of.try_emplace(key, graph.edges.size());
    if (added) graph.edges.push_back({from->second, to->second, std::get<2>(key), std::get<3>(key)});
    ++graph.edges[entry->second].arcs;
  }

  // Layout: the circle on top, the class nodes in rows below it.
  const std::size_t on_circle = circle_nodes;
  double top = 30;
  if (on_circle > 0) {
    const double radius = std::max(70.0, on_circle * 2.6 * kCircleNodeRadius / (2 * M_PI));
    graph.center_x = graph.width / 2;
    graph.center_y = top + radius + kCircleNodeRadius;
    for (std::size_t i = 0; i < on_circle; ++i) {
      // Clockwise from the top, in wait order.
      const double angle = -M_PI / 2 + 2 * M_PI * i / on_circle;
      graph.nodes[i].x = graph.center_x + radius * std::cos(angle);
      graph.nodes[i].y = graph.center_y + radius * std::sin(angle);
    }
    top = graph.center_y + radius + kCircleNodeRadius + 50;
  }
  const std::size_t boxes = graph.nodes.size() - on_circle;
  for (std::size_t i = 0; i < boxes; ++i) {
    const std::size_t row = i / kBoxesPerRow, column = i % kBoxesPerRow;
    const std::size_t in_row = std::min(kBoxesPerRow, boxes - row * kBoxesPerRow);
    const double row_width = in_row * kBoxWidth + (in_row - 1) * kBoxGap;
    Node& node = graph.nodes[on_circle + i];
    node.x = (graph.width - row_width) / 2 + column * (kBoxWidth + kBoxGap) + kBoxWidth / 2;
    node.y = top + row * (kBoxHeight + kRowGap) + kBoxHeight / 2;
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
    const bool core = from.kind == NodeKind::core && to.kind == NodeKind::core && !edge.possible;
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
        const double length = std::max(std::hypot(from.x - graph.center_x, from.y - graph.center_y), 1e-9);
        out_x = (from.x - graph.center_x) / length;
        out_y = (from.y - graph.center_y) / length;
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
)";

std::string frames_html(const Json& stack, SourceFiles& sources) {
  std::string html = "<ol class=\"stack\">\n";
  for (const Json& frame : stack) {
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

std::string thread_html(const Json& thread, SourceFiles& sources, int rank) {
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
  const Json& stack = thread.at("stack");
  if (!stack.empty())
    html += fmt::format("<details><summary>stack of rank {}, thread {} ({} frame{})</summary>\n{}</details>\n", rank,
                        thread.at("id").get<int>(), stack.size(), stack.size() == 1 ? "" : "s",
                        frames_html(stack, sources));
  return html;
}

std::string class_html(const Json& rank_class, int index, const std::map<int, const Json*>& rank_entry,
                       SourceFiles& sources) {
  const std::vector<int> ranks = rank_list(rank_class.at("rank_list"));
  const int representative = rank_class.at("representative").get<int>();
  std::string hosts;
  for (const Json& host : rank_class.at("hosts"))
    hosts += (hosts.empty() ? "" : "; ") + fmt::format("{}: ranks {}", escaped(host.at("host").get<std::string>()),
                                                       escaped(host.at("ranks").get<std::string>()));
  std::string html = fmt::format("<section class=\"class\" id=\"class-{}\">\n<h3>{}</h3>\n<p>where: {}</p>\n", index,
                                 escaped(ranks_text(ranks)), hosts);
  const auto entry = rank_entry.find(representative);
  if (entry == rank_entry.end()) return html + "</section>\n";
  const Json& rank = *entry->second;
  html += fmt::format("<p>state: {}", escaped(rank.at("state").get<std::string>()));
  if (!rank.at("exit_status").is_null()) html += fmt::format(", exiting with status {}", rank.at("exit_status").get<int>());
  html += "</p>\n<ul>\n";
  // Each rank's calls (their arguments differ within a class).
  const std::size_t listed = ranks.size() <= kCallsListed ? ranks.size() : 1;
  for (std::size_t i = 0; i < listed; ++i) {
    const auto member = rank_entry.find(ranks[i]);
    if (member == rank_entry.end()) continue;
    for (const Json& thread : member->second->at("threads")) {
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
  for (const Json& thread : rank.at("threads")) html += thread_html(thread, sources, representative);
  return html + "</section>\n";
}

std::string page(const Json& report, std::string_view title) {
  const std::string check = report.at("check").get<std::string>();
  const std::string severity = report.at("severity").get<std::string>();
  std::map<int, const Json*> rank_entry;
  for (const Json& rank : report.at("ranks")) rank_entry[rank.at("rank").get<int>()] = &rank;
  std::map<int, int> class_of_rank;
  const Json& classes = report.at("classes");
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
  const std::vector<int> cycle = rank_list(report.at("core").at("cycle"));
  if (!cycle.empty()) {
    // Folded as the graph folds it; the last rank is the first again.
    std::string text;
    for (std::size_t i = 0; i < cycle.size(); ++i) {
      const bool folded = cycle.size() - 1 > kCycleShown && i >= kCycleEnds && i + kCycleEnds < cycle.size() - 1;
      if (folded && i == kCycleEnds) text += fmt::format(" &rarr; &hellip; {} ranks &hellip;", cycle.size() - 1 - 2 * kCycleEnds);
      if (!folded) text += (text.empty() ? "" : " &rarr; ") + fmt::format("rank {}", cycle[i]);
    }
    html += "<p>deadlock: " + text + "</p>\n";
  } else if (const std::vector<int> core = rank_list(report.at("core").at("ranks")); !core.empty()) {
    html += "<p>deadlock among " + escaped(ranks_text(core)) + ", each waiting for any one of the others</p>\n";
  }
  if (report.at("partial").get<bool>()) html += "<p>the other ranks still run</p>\n";
  if (const std::vector<int> waiting = rank_list(report.at("waiting")); !waiting.empty())
    html += fmt::format("<p>{} wait for {}, outside MPI</p>\n", escaped(ranks_text(waiting)),
                        escaped(ranks_text(rank_list(report.at("culprits")))));

  const Graph graph = graph_of(report, class_of_rank);
  html += "<h2>Who waits for whom</h2>\n<figure>\n" + svg_of(graph) + "</figure>\n";
  html += "<p class=\"legend\">";
  for (const auto& [kind, meaning] : {std::pair{NodeKind::core, "deadlocked"}, std::pair{NodeKind::behind, "blocked behind the deadlock"},
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
  const Json report = parse(json);
  check_schema(report);
  try {
    return page(report, title);
  } catch (const Json::exception& error) {
    const std::string what = error.what();
    throw BadReport("not an mpisentry report: " + what.substr(what.find("] ") == std::string::npos ? 0 : what.find("] ") + 2));
  }
}

}  // namespace mpisentry::report
