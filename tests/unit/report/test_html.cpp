// The report's page (report/html.hpp): what it draws and says, that it stays
// small at 1,000 ranks, and the messages for report files that are not one.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "report/html.hpp"

using mpisentry::report::BadReport;
using mpisentry::report::format_html;
using Json = nlohmann::json;

namespace {

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t found = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++found;
  return found;
}

// A HARD report of `ranks` ranks: the first `cycle` wait for the next in a
// ring, the others wait for rank 0 behind them; each rank's frame points at
// `source`, line 3.
Json ring_report(int ranks, int cycle, const std::string& source = "/nonexistent/ring.c") {
  Json report = {{"schema", "mpisentry-report/5"}, {"check", "GLOBAL:DEADLOCK:HARD"}, {"severity", "error"},
                 {"aborts_job", true}, {"rule", "the ring's rule"}, {"threshold_seconds", 5.0},
                 {"threshold_key", "DEADLOCK-TIMEOUT"}, {"partial", false}, {"waiting", Json::array()},
                 {"culprits", Json::array()}, {"signal", nullptr}, {"arcs_left_out", 0}};
  Json core_ranks = Json::array(), cycle_ranks = Json::array(), behind = Json::array(), arcs = Json::array();
  Json entries = Json::array();
  for (int rank = 0; rank < ranks; ++rank) {
    const int waits_for = rank < cycle ? (rank + 1) % cycle : 0;
    (rank < cycle ? core_ranks : behind).push_back(rank);
    if (rank < cycle) cycle_ranks.push_back(rank);
    arcs.push_back({{"from", {{"rank", rank}, {"thread", 0}}}, {"to", waits_for}, {"mode", "all"}, {"possible", false}});
    const Json thread = {{"id", 0}, {"state", "blocked"}, {"seconds", 5.2}, {"function", "MPI_Recv"},
                         {"call", "MPI_Recv(source=" + std::to_string(waits_for) + ")"}, {"wait_mode", "all"},
                         {"waits_for", {{waits_for, waits_for}}}, {"possibly_waits_for", Json::array()},
                         {"wait_reason", "MPI_Recv from rank " + std::to_string(waits_for)}, {"collective", nullptr},
                         {"started_collectives", Json::array()}, {"converted_send", false}, {"messages", Json::array()},
                         {"stack", {{{"function", "ring"}, {"file", source}, {"line", 3}, {"module", "ring"}}}}};
    entries.push_back({{"rank", rank}, {"host", "node<1>"}, {"pid", 100 + rank}, {"state", "blocked"}, {"seconds", 5.2},
                       {"activity", 7}, {"exit_status", nullptr}, {"threads", {thread}}, {"collectives", Json::array()}});
  }
  cycle_ranks.push_back(0);
  Json class_ranks = Json::array(), rest = Json::array();
  for (int rank = 0; rank < ranks; ++rank) (rank < cycle ? class_ranks : rest).push_back(rank);
  Json classes = {{{"ranks", "cycle"}, {"rank_list", class_ranks}, {"representative", 0},
                   {"hosts", {{{"host", "node<1>"}, {"ranks", "0"}}}}}};
  if (!rest.empty())
    classes.push_back({{"ranks", "rest"}, {"rank_list", rest}, {"representative", cycle},
                       {"hosts", {{{"host", "node<1>"}, {"ranks", "0"}}}}});
  report["core"] = {{"ranks", core_ranks}, {"cycle", cycle_ranks}, {"blocked_behind", behind}};
  report["arcs"] = arcs;
  report["ranks"] = entries;
  report["classes"] = classes;
  return report;
}

std::string error_of(const std::string& json) {
  try {
    format_html(json, "r.json");
  } catch (const BadReport& bad) {
    return bad.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("format_html: the verdict, its rule, the cycle drawn, each class with its calls and stacks", "[html]") {
  const std::string page = format_html(ring_report(6, 4).dump(), "r.json");
  CHECK(page.starts_with("<!DOCTYPE html>"));
  CHECK(page.find("<h1>GLOBAL:DEADLOCK:HARD <span class=\"badge error\">error</span></h1>") != std::string::npos);
  CHECK(page.find("rule: the ring&#39;s rule") != std::string::npos);
  CHECK(page.find("deadlock: rank 0 &rarr; rank 1 &rarr; rank 2 &rarr; rank 3 &rarr; rank 0") != std::string::npos);
  // Ranks 0-3 on the circle, the class of ranks 4-5 in a box; the ring's arcs red, the others' not.
  CHECK(count(page, "<circle class=\"node node-core\"") == 4);
  CHECK(count(page, "<rect class=\"node\"") == 1);
  CHECK(page.find(">ranks 4-5</text>") != std::string::npos);
  CHECK(count(page, "class=\"edge edge-core\"") == 4);
  CHECK(count(page, "class=\"edge edge-wait\"") == 1);  // both of 4 and 5 to rank 0: one edge
  CHECK(page.find("<title>ranks 4-5 (2 ranks) waits for rank 0 (2 arcs)</title>") != std::string::npos);
  CHECK(page.find("<code class=\"call\">[2] MPI_Recv(source=3)</code>") != std::string::npos);
  CHECK(page.find("<details><summary>stack of rank 0, thread 0 (1 frame)</summary>") != std::string::npos);
  CHECK(page.find("where: node&lt;1&gt;: ranks 0") != std::string::npos);  // escaped
  // Nothing that loads or runs: one self-contained page.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("default-src 'none'") != std::string::npos);
}

TEST_CASE("format_html: the first screen's stack tree, frames shared by classes merged, each with its ranks", "[html]") {
  const std::string page = format_html(ring_report(6, 4).dump(), "r.json");
  const auto tree_at = page.find("<h2>Where the ranks are</h2>");
  REQUIRE(tree_at != std::string::npos);
  CHECK(tree_at < page.find("<h2>Who waits for whom</h2>"));
  // Both classes are in ring (ring.c:3): one node of 6 ranks, then each class's call.
  CHECK(count(page, "<code>ring</code> <span class=\"at\">/nonexistent/ring.c:3</span> <span class=\"tree-ranks\">"
                    "ranks 0-5 (6 ranks)</span>") == 1);
  CHECK(page.find("<li><span class=\"badge\" style=\"background:#d32f2f\">deadlocked</span> <a href=\"#class-0\">"
                  "<code class=\"call\">[0] MPI_Recv(source=1)</code></a> <span class=\"tree-ranks\">ranks 0-3 (4 "
                  "ranks)</span></li>") != std::string::npos);
  CHECK(page.find("<li><span class=\"badge\" style=\"background:#f57c00\">blocked behind</span> <a href=\"#class-1\">"
                  "<code class=\"call\">MPI_Recv(source=0)</code></a> <span class=\"tree-ranks\">ranks 4-5 (2 "
                  "ranks)</span></li>") != std::string::npos);

  SECTION("the innermost frames are shown, the outer ones folded") {
    Json deep = ring_report(2, 2);
    for (Json& rank : deep["ranks"]) {
      Json& stack = rank["threads"][0]["stack"];
      for (const char* outer : {"solve", "iterate", "main"})
        stack.push_back({{"function", outer}, {"file", "/nonexistent/ring.c"}, {"line", 9}, {"module", "ring"}});
      stack.insert(stack.begin(),
                   Json{{"function", "exchange"}, {"file", "/nonexistent/ring.c"}, {"line", 5}, {"module", "ring"}});
    }
    const std::string folded = format_html(deep.dump(), "r.json");
    // exchange, ring and solve shown; iterate and main folded.
    CHECK(folded.find("<summary>2 outer frames <span class=\"tree-ranks\">ranks 0-1 (2 ranks)</span></summary>"
                      "<ol class=\"stack\"><li><code>main</code>") != std::string::npos);
    CHECK(folded.find("<li><code>solve</code>") != std::string::npos);
  }
}

TEST_CASE("format_html: every deadlock named and drawn on a circle of its own", "[html]") {
  Json report = ring_report(6, 4);
  report["core"]["cycles"] = {{{"ranks", {0, 1}}, {"cycle", {0, 1, 0}}}, {{"ranks", {2, 3}}, {"cycle", {2, 3, 2}}}};
  report["arcs"][1]["to"] = 0;  // 0 <-> 1 and 2 <-> 3
  report["arcs"][3]["to"] = 2;
  const std::string page = format_html(report.dump(), "r.json");
  CHECK(page.find("<p class=\"deadlock\">deadlock 1: rank 0 &rarr; rank 1 &rarr; rank 0</p>") != std::string::npos);
  CHECK(page.find("<p class=\"deadlock\">deadlock 2: rank 2 &rarr; rank 3 &rarr; rank 2</p>") != std::string::npos);
  CHECK(page.find("<p>blocked behind the deadlocks: ranks 4-5 (2 ranks)</p>") != std::string::npos);
  CHECK(count(page, "<circle class=\"node node-core\"") == 4);
  CHECK(count(page, "<text class=\"deadlock-name\"") == 2);
  CHECK(count(page, "class=\"edge edge-core\"") == 4);
  CHECK(page.find("<span class=\"badge\" style=\"background:#d32f2f\">deadlocks 1, 2</span>") != std::string::npos);

  SECTION("a knot's ranks off its cycle are named, and red") {
    report["core"]["cycles"] = {{{"ranks", {0, 1, 2, 3}}, {"cycle", {0, 1, 0}}}};
    const std::string knot = format_html(report.dump(), "r.json");
    CHECK(knot.find("deadlock: rank 0 &rarr; rank 1 &rarr; rank 0, and ranks 2-3 (2 ranks) on other cycles among "
                    "ranks 0-3 (4 ranks)</p>") != std::string::npos);
    CHECK(count(knot, "<circle class=\"node node-core\"") == 2);
    CHECK(knot.find("rx=\"8\" fill=\"#d32f2f\"/>") != std::string::npos);  // the box of ranks 2-3
  }
}

TEST_CASE("format_html: a frame's source lines when the file is readable, the frame's line marked", "[html]") {
  const std::string source =
      (std::filesystem::temp_directory_path() / ("mpisentry_html_" + std::to_string(::getpid()) + ".c")).string();
  std::ofstream(source) << "int one;\nint two;\nMPI_Recv(<&>);\nint four;\nint five;\nint six;\n";
  const std::string page = format_html(ring_report(2, 2, source).dump(), "r.json");
  std::filesystem::remove(source);
  CHECK(page.find("<pre class=\"source\">    1 int one;\n    2 int two;\n<b>    3 MPI_Recv(&lt;&amp;&gt;);</b>\n"
                  "    4 int four;\n    5 int five;\n</pre>") != std::string::npos);
  CHECK(format_html(ring_report(2, 2).dump(), "r.json").find("<pre class=\"source\">") == std::string::npos);
}

TEST_CASE("format_html: 1,000 ranks in a ring stay a picture of a dozen nodes and a page of kilobytes", "[html]") {
  const std::string page = format_html(ring_report(1000, 600).dump(), "r.json");
  CHECK(count(page, "<circle class=\"node node-core\"") == 11);  // 0-4, the fold, 595-599
  CHECK(page.find(">\u2026</text>") != std::string::npos);
  CHECK(page.find("<title>ranks 5-594 (590 ranks)</title>") != std::string::npos);
  CHECK(page.find("&hellip; 590 ranks &hellip;") != std::string::npos);
  CHECK(count(page, "<rect class=\"node\"") == 1);
  CHECK(page.find("and 599 more ranks, in the same calls with their own arguments") != std::string::npos);
  CHECK(page.size() < 40'000);
}

TEST_CASE("format_html: a file that is not a report says what is wrong with it", "[html]") {
  const std::string whole = ring_report(2, 2).dump();
  CHECK(error_of(whole.substr(0, whole.size() / 2)).starts_with("truncated: the JSON stops after "));
  CHECK(error_of("").starts_with("truncated: "));
  CHECK(error_of("<html>").starts_with("not JSON: parse error at line 1, column 1"));
  CHECK(error_of("[1, 2]") == "not an mpisentry report: the JSON is not an object");
  CHECK(error_of("{\"check\": 1}") == "not an mpisentry report: it has no \"schema\" naming mpisentry-report/5");
  Json older = ring_report(2, 2);
  older["schema"] = "mpisentry-report/4";
  CHECK(error_of(older.dump()) ==
        "schema \"mpisentry-report/4\": this mpisentry reads mpisentry-report/5; make the page with the mpisentry "
        "that wrote the report");
  Json missing = ring_report(2, 2);
  missing["ranks"][1].erase("pid");
  missing["ranks"][1]["rank"] = "one";
  CHECK_THAT(error_of(missing.dump()), Catch::StartsWith("not an mpisentry report: (/ranks/1/rank) type must be number"));
}
