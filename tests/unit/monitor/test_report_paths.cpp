// Where relative report paths lead: the directory mpisentry started in, else
// rank 0's working directory.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "monitor/report_paths.hpp"

using mpisentry::monitor::ReportPaths;
using mpisentry::monitor::resolve_report_paths;

namespace {

struct TempDirectory {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("mpisentry_report_paths_" + std::to_string(::getpid()));
  TempDirectory() { std::filesystem::create_directories(path); }
  ~TempDirectory() { std::filesystem::remove_all(path); }
};

ReportPaths asked(std::string text, std::string json = "", std::string dot = "", std::string html = "") {
  ReportPaths paths;
  paths.text = std::move(text);
  paths.json = std::move(json);
  paths.dot = std::move(dot);
  paths.html = std::move(html);
  return paths;
}

}  // namespace

TEST_CASE("relative report paths lead to the directory mpisentry started in", "[report_paths]") {
  const TempDirectory launch;
  const std::string started = launch.path.string();
  ReportPaths all = asked("sub/../r.txt", "r.json", "/abs/r.dot", "r.html");
  all.junit = "ci/r.xml";
  all.sarif = "/abs/r.sarif";
  const ReportPaths paths = resolve_report_paths(all, started.c_str(), "/rank0");
  CHECK(paths.text == started + "/r.txt");
  CHECK(paths.json == started + "/r.json");
  CHECK(paths.dot == "/abs/r.dot");
  CHECK(paths.html == started + "/r.html");
  CHECK(paths.junit == started + "/ci/r.xml");
  CHECK(paths.sarif == "/abs/r.sarif");
  CHECK(paths.base == "the directory mpisentry started in, " + started);
  CHECK(resolve_report_paths(asked("r.txt"), started.c_str(), "/rank0").json.empty());
}

TEST_CASE("without the launcher's directory, relative report paths lead to rank 0's", "[report_paths]") {
  SECTION("not started by mpisentry") {
    const ReportPaths paths = resolve_report_paths(asked("r.txt"), nullptr, "/rank0");
    CHECK(paths.text == "/rank0/r.txt");
    CHECK(paths.base == "rank 0's working directory, /rank0 (not started by the mpisentry command)");
    CHECK(resolve_report_paths(asked("r.txt"), "", "/rank0").text == "/rank0/r.txt");
  }
  SECTION("the launcher's directory is not on rank 0's host") {
    const ReportPaths paths = resolve_report_paths(asked("r.txt"), "/no/such/mpisentry/dir", "/rank0");
    CHECK(paths.text == "/rank0/r.txt");
    CHECK(paths.base == "rank 0's working directory, /rank0: /no/such/mpisentry/dir, where mpisentry started, is not "
                        "a directory on rank 0's host");
  }
}
