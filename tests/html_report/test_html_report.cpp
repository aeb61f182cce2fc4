// The report's page of a real deadlock: written by the job (REPORT-HTML) and
// by `mpisentry report` from its JSON, loaded in Debian's chromium headless
// without a console message (a blocked load or script would make one), and
// its graph drawn: the screenshot holds the red of the deadlocked ranks. Of
// two deadlocks in one job, both are drawn, and the first screen shows every
// class's call and frames with file:line.
#include <catch2/catch.hpp>

#include <fstream>

#include "report_text.hpp"
#include "scenario.hpp"

using namespace harness;

namespace {

// The fill of a deadlocked rank's node (report/html.cpp), and the least of
// its pixels that four of them make; the page's "error" badge alone has far
// fewer.
constexpr const char* kCoreColor = "d32f2f";
constexpr long kFourNodesPixels = 5000;

// The background of a frame's file:line in the page's stack tree.
constexpr const char* kPlaceColor = "e8f5e9";

std::string svg_of(const std::string& page) {
  const auto start = page.find("<svg"), end = page.find("</svg>");
  return start == std::string::npos || end == std::string::npos ? "" : page.substr(start, end - start);
}

// The part of `page` from `from` to `to`, with what folded <details> hold left out.
std::string unfolded_between(const std::string& page, const std::string& from, const std::string& to) {
  const auto start = page.find(from), end = page.find(to);
  if (start == std::string::npos || end == std::string::npos || end < start) return "";
  std::string part = page.substr(start, end - start);
  for (auto open = part.find("<details"); open != std::string::npos; open = part.find("<details", open)) {
    const auto close = part.find("</details>", open);
    part.erase(open, close == std::string::npos ? std::string::npos : close + 10 - open);
  }
  return part;
}

// Chromium's screenshot of the page's first `height` pixels, 1000 wide,
// with no console message; the screenshot's path.
std::string screenshot(const Workspace& workspace, const std::string& page_path, int height) {
  const std::string png = (workspace.dir() / ("page-" + std::to_string(height) + ".png")).string();
  const JobResult browser = run_job(
      workspace, {"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-breakpad",
                  "--enable-logging=stderr", "--v=0", "--window-size=1000," + std::to_string(height),
                  "--screenshot=" + png, "file://" + page_path});
  INFO(describe(browser));
  REQUIRE(browser.succeeded());  // chromium is Debian's package chromium (scripts/packages.sh)
  CHECK(browser.err.find(":CONSOLE") == std::string::npos);
  return png;
}

// How many pixels of the image have exactly the colour RRGGBB.
long pixels_of(const Workspace& workspace, const std::string& png, const char* color) {
  const JobResult pixels = run_job(workspace, {"/usr/bin/python3", COUNT_COLOR_SCRIPT, png, color});
  INFO(describe(pixels));
  REQUIRE(pixels.succeeded());
  return std::stol(pixels.out);
}

}  // namespace

TEST_CASE("html report: the job's page and mpisentry report's agree, and chromium draws the graph without a "
          "console message",
          "[html_report]") {
  Workspace workspace;
  const std::string page_path = (workspace.dir() / "report.html").string();
  const JobResult result =
      run_checked(workspace, 4, TEST_PROGRAM(ssend_ring), with(kDeadlockOptions, {"--report-html", page_path}));
  INFO(describe(result));
  REQUIRE(result.failed());
  const std::optional<std::string> page = read_file(page_path);
  REQUIRE(page.has_value());
  CHECK(page->find("<h1>GLOBAL:DEADLOCK:HARD") != std::string::npos);
  CHECK(count_occurrences(*page, "<circle class=\"node node-core\"") == 4);
  CHECK(page->find("ssend_ring.c:") != std::string::npos);  // the stacks, with their source lines
  CHECK(page->find("<pre class=\"source\">") != std::string::npos);

  const std::string again = (workspace.dir() / "again.html").string();
  const JobResult made =
      run_job(workspace, {MPISENTRY_LAUNCHER, "report", workspace.json_path().string(), "-o", again});
  INFO(describe(made));
  REQUIRE(made.succeeded());
  CHECK(made.out == "mpisentry report: wrote " + again + "\n");
  const std::optional<std::string> page_again = read_file(again);
  REQUIRE(page_again.has_value());
  CHECK(svg_of(*page_again) == svg_of(*page));
  CHECK(!svg_of(*page).empty());

  CHECK(pixels_of(workspace, screenshot(workspace, page_path, 1400), kCoreColor) >= kFourNodesPixels);
}

TEST_CASE("html report: two deadlocks drawn red, and the first screen says where in the code every class is",
          "[html_report]") {
  Workspace workspace;
  const std::string page_path = (workspace.dir() / "report.html").string();
  const Program program = TEST_PROGRAM(two_cycles);
  const JobResult result = run_checked(workspace, 12, program, with(kDeadlockOptions, {"--report-html", page_path}));
  INFO(describe(result));
  REQUIRE(result.failed());
  const std::optional<std::string> page = read_file(page_path);
  REQUIRE(page.has_value());
  CHECK(page->find("deadlock 1: rank 0 &rarr; rank 1 &rarr; rank 2 &rarr; rank 0</p>") != std::string::npos);
  CHECK(page->find("deadlock 2: rank 3 &rarr; rank 4 &rarr; rank 3</p>") != std::string::npos);
  CHECK(page->find("blocked behind the deadlocks: ranks 5-11 (7 ranks)") != std::string::npos);
  CHECK(count_occurrences(*page, "<circle class=\"node node-core\"") == 5);
  CHECK(count_occurrences(*page, "class=\"edge edge-core\"") == 5);  // 0->1->2->0 and 3->4->3
  // Each class's call and each marked line, in the tree and out of any fold.
  const std::string tree = unfolded_between(*page, "<h2>Where the ranks are</h2>", "<h2>Who waits for whom</h2>");
  for (const int line : marker_lines(program.source))
    CHECK(any_line_matches(tree, regex_escape("two_cycles.c:" + std::to_string(line) + "</span>")));
  for (const char* call : {"MPI_Ssend(", "MPI_Recv(", "MPI_Barrier("}) CHECK(tree.find(call) != std::string::npos);
  CHECK(tree.find(">deadlock 1</span>") != std::string::npos);
  CHECK(tree.find(">deadlock 2</span>") != std::string::npos);
  CHECK(tree.find(">blocked behind</span>") != std::string::npos);
  // A first screen of 1000 by 800 pixels shows the tree's eight file:line
  // places (over 2,000 pixels of background each, 41,000 in all with
  // absolute paths) and, at 1000 by 1400, the graph's five red nodes.
  CHECK(pixels_of(workspace, screenshot(workspace, page_path, 800), kPlaceColor) >= 8 * 2000);
  CHECK(pixels_of(workspace, screenshot(workspace, page_path, 1400), kCoreColor) >= kFourNodesPixels * 5 / 4);
}

TEST_CASE("html report: a report file that is not one gets a message naming the file and what is wrong",
          "[html_report]") {
  Workspace workspace;
  const auto report_of = [&](const std::string& name, const std::string& contents) {
    const std::string path = (workspace.dir() / name).string();
    std::ofstream(path) << contents;
    return run_job(workspace, {MPISENTRY_LAUNCHER, "report", path});
  };
  const std::string dir = workspace.dir().string();
  const JobResult truncated = report_of("cut.json", "{\"schema\":\"mpisentry-report/5\",\"check\":\"GLOB");
  CHECK(truncated.exit_status == 2);
  CHECK(truncated.err.starts_with("mpisentry report: " + dir + "/cut.json: truncated: the JSON stops after 44 bytes"));
  const JobResult text = report_of("text.json", "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error\n");
  CHECK(text.exit_status == 2);
  CHECK(text.err.starts_with("mpisentry report: " + dir + "/text.json: not JSON: parse error at line 1, column 5"));
  const JobResult older = report_of("old.json", "{\"schema\":\"mpisentry-report/4\"}");
  CHECK(older.exit_status == 2);
  CHECK(older.err.starts_with("mpisentry report: " + dir + "/old.json: schema \"mpisentry-report/4\": this mpisentry "
                              "reads mpisentry-report/5"));
  const JobResult no_file = run_job(workspace, {MPISENTRY_LAUNCHER, "report"});
  CHECK(no_file.exit_status == 2);
  CHECK(no_file.err == "mpisentry report: FILE.json is required; see mpisentry report --help\n");
  const JobResult missing = run_job(workspace, {MPISENTRY_LAUNCHER, "report", dir + "/none.json"});
  CHECK(missing.exit_status == 2);
  CHECK(missing.err == "mpisentry report: cannot read " + dir + "/none.json: No such file or directory\n");
  CHECK_FALSE(std::filesystem::exists(workspace.dir() / "cut.html"));
}
