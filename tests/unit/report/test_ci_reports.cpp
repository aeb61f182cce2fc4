// The CI reports' writers (JUnit, SARIF), their records, and the sink that
// keeps every rank's records of a run in both files.
#include <fcntl.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report/quote.hpp"
#include "report/report.hpp"
#include "report/sink.hpp"

using namespace mpisentry;
using namespace mpisentry::report;

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

CiRecord deadlock_record() {
  Report report;
  report.rule = "every rank waits";
  for (int rank = 0; rank < 3; ++rank) {
    RankSnapshot snapshot;
    snapshot.rank = rank;
    ThreadSnapshot thread;
    thread.state = RankState::Blocked;
    thread.function = "MPI_Recv";
    thread.stack = {Frame{"exchange", rank == 2 ? "/src/b.c" : "/src/my dir/a.c", rank == 2 ? 9 : 7, "app"},
                    Frame{"main", "/src/a.c", 30, "app"}};
    snapshot.threads.push_back(thread);
    report.ranks.push_back(snapshot);
  }
  return ci_record(report, "[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error\n");
}

}  // namespace

TEST_CASE("ci record: ranks at the same innermost frame and call share a place", "[ci_reports]") {
  const CiRecord record = deadlock_record();
  REQUIRE(record.places.size() == 2);
  CHECK(record.places[0].ranks == std::vector<int>{0, 1});
  CHECK(record.places[0].frame.line == 7);
  CHECK(record.places[0].call == "MPI_Recv");
  CHECK(record.places[1].ranks == std::vector<int>{2});
  CHECK(record.message == "every rank waits");
}

TEST_CASE("ci records: a line cut short is skipped, the others read back whole", "[ci_reports]") {
  const CiRecord record = deadlock_record();
  const std::string line = ci_record_line(record);
  const std::vector<CiRecord> read = read_ci_records(line + line.substr(0, line.size() / 2) + "\n" + line);
  REQUIRE(read.size() == 2);
  CHECK(read[1].places[1].frame == record.places[1].frame);
  CHECK(read[1].places[0].ranks == record.places[0].ranks);
  CHECK(read[1].text == record.text);
}

TEST_CASE("sarif: the check as the rule, its level, a file URI and line per place", "[ci_reports]") {
  const auto log = nlohmann::json::parse(format_sarif({deadlock_record()}));
  CHECK(log["version"] == "2.1.0");
  const auto& run = log["runs"][0];
  CHECK(run["tool"]["driver"]["rules"][0]["id"] == "GLOBAL:DEADLOCK:HARD");
  const auto& result = run["results"][0];
  CHECK(result["level"] == "error");
  CHECK(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "file:///src/my%20dir/a.c");
  CHECK(result["locations"][0]["physicalLocation"]["region"]["startLine"] == 7);
  CHECK(result["locations"][0]["message"]["text"] == "ranks 0-1: MPI_Recv");
  CHECK(result["locations"][1]["message"]["text"] == "rank 2: MPI_Recv");
  CHECK(!run.contains("originalUriBaseIds"));
  CHECK(nlohmann::json::parse(format_sarif({}))["runs"][0]["results"].empty());
  CiRecord relative = deadlock_record();
  relative.places[1].frame.file = "../src/b.c";
  const auto relative_run = nlohmann::json::parse(format_sarif({relative}))["runs"][0];
  const auto& artifact = relative_run["results"][0]["locations"][1]["physicalLocation"]["artifactLocation"];
  CHECK(artifact["uri"] == "../src/b.c");
  CHECK(artifact["uriBaseId"] == "COMPILE_DIRECTORY");
  CHECK(relative_run["originalUriBaseIds"]["COMPILE_DIRECTORY"].contains("description"));
}

TEST_CASE("junit: an error is a failure, a warning passes with its text, no record is one passing case",
          "[ci_reports]") {
  CiRecord warning = deadlock_record();
  warning.check = Check::NoProgress;
  const std::string xml = format_junit({deadlock_record(), warning});
  CHECK(xml.find("<testsuites name=\"mpisentry\" tests=\"2\" failures=\"1\" errors=\"0\">") != std::string::npos);
  CHECK(xml.find("<testcase classname=\"mpisentry.GLOBAL:DEADLOCK:HARD\" name=\"exchange (/src/my dir/a.c:7), "
                 "ranks 0-1\">\n      <failure type=\"GLOBAL:DEADLOCK:HARD\" message=\"every rank waits\">") !=
        std::string::npos);
  CHECK(xml.find("<system-out>[0] ERROR: GLOBAL:DEADLOCK:HARD: fatal error\n</system-out>") != std::string::npos);
  CHECK(format_junit({}).find("<testcase classname=\"mpisentry\" name=\"no reports\"/>") != std::string::npos);
  CHECK(xml_escape("a<b>&\"\n\r\x01\xff", true) == "a&lt;b&gt;&amp;&quot;&#10;&#13;\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(xml_escape("a\n\tb", false) == "a\n\tb");
}

TEST_CASE("sink: every rank's record of a run is in both CI reports, an earlier run's are gone", "[ci_reports]") {
  char name[] = "/tmp/mpisentry-ci-XXXXXX";
  REQUIRE(mkdtemp(name) != nullptr);
  const std::string folder = name;
  SinkSetup setup;
  setup.junit = folder + "/ci.xml";
  setup.sarif = folder + "/ci.sarif";
  setup.stderr_fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  std::ofstream(ci_records_path(setup.junit, setup.sarif)) << ci_record_line(deadlock_record());  // an earlier run's
  start_ci_reports(setup.junit, setup.sarif);
  CHECK(contents(setup.junit).find("name=\"no reports\"") != std::string::npos);
  Sink rank0(setup);
  setup.rank = 1;
  Sink rank1(setup);
  CiRecord first = deadlock_record(), second = deadlock_record();
  second.check = Check::RankLost;
  second.rank = 1;
  rank0.write("[0] first\n", {}, {}, &first);
  rank1.write_rank_report("[1] second\n", {}, &second);
  rank1.write("[1] no record\n");
  const std::string junit = contents(setup.junit);
  CHECK(junit.find("tests=\"2\" failures=\"2\"") != std::string::npos);
  CHECK(junit.find("mpisentry.GLOBAL:RANK:LOST") != std::string::npos);
  CHECK(nlohmann::json::parse(contents(setup.sarif))["runs"][0]["results"].size() == 2);
  ::close(setup.stderr_fd);
  std::filesystem::remove_all(folder);
}
