// The run's reports as JUnit XML, in the shape of the Jenkins/Ant junit
// schema (read by tests/ci_reports with python3-junitparser): one suite, "mpisentry", with a test case per
// report. A test case per report rather than per class of ranks: a report's
// classes are its own (another report of the same run groups the ranks
// otherwise), while the report is what a CI system shows, counts and tracks
// from run to run. An error (a fatal report or an error finding) is a
// <failure>; a warning or information passes, with its text as
// <system-out>, since the program went on. A run with no report gets one
// passing test case, "no reports", so that a clean run is told from one
// that did not run.
//
// <testsuites name="mpisentry" tests="2" failures="1" errors="0">
//   <testsuite name="mpisentry" tests="2" failures="1" errors="0" skipped="0">
//     <testcase classname="mpisentry.GLOBAL:DEADLOCK:HARD" name="exchange_halo (/src/deadlock.c:23), ranks 0-3">
//       <failure type="GLOBAL:DEADLOCK:HARD" message="the rule, its first line">the report's text</failure>
//     </testcase>
//     <testcase classname="mpisentry.LOCAL:REQUEST:NOT_FREED" name="...">
//       <system-out>the report's text</system-out>
//     </testcase>
//   </testsuite>
// </testsuites>
#include <iterator>

#include <fmt/format.h>

#include "report/quote.hpp"
#include "report/report.hpp"

namespace mpisentry::report {
namespace {

bool is_failure(Check check) { return severity(check) == Severity::Fatal || severity(check) == Severity::Error; }

// Where the report's first call was made, and by whom: "exchange_halo
// (/src/deadlock.c:23), ranks 0-3"; "reported by rank 2" without a place.
std::string case_name(const CiRecord& record) {
  if (record.places.empty()) return fmt::format("reported by rank {}", record.rank);
  const CiRecord::Place& place = record.places.front();
  const Frame& frame = place.frame;
  const std::string where = frame.file.empty() ? frame.module
                            : frame.line > 0   ? fmt::format("{}:{}", frame.file, frame.line)
                                               : frame.file;
  return fmt::format("{} ({}), rank{} {}", frame.function, where, place.ranks.size() == 1 ? "" : "s",
                     compress_ranks(place.ranks));
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

std::string format_junit(const std::vector<CiRecord>& records) {
  std::size_t failures = 0;
  std::string cases;
  for (const CiRecord& record : records) {
    const char* name = check_name(record.check);
    fmt::format_to(std::back_inserter(cases), "    <testcase classname=\"mpisentry.{}\" name=\"{}\">\n",
                   xml_escape(name, true), xml_escape(case_name(record), true));
    if (is_failure(record.check)) {
      ++failures;
      fmt::format_to(std::back_inserter(cases), "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                     xml_escape(name, true), xml_escape(first_line(record.message), true),
                     xml_escape(record.text, false));
    } else {
      fmt::format_to(std::back_inserter(cases), "      <system-out>{}</system-out>\n", xml_escape(record.text, false));
    }
    cases += "    </testcase>\n";
  }
  if (records.empty()) cases = "    <testcase classname=\"mpisentry\" name=\"no reports\"/>\n";
  const std::size_t tests = records.empty() ? 1 : records.size();
  const std::string counts = fmt::format("tests=\"{}\" failures=\"{}\" errors=\"0\"", tests, failures);
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"mpisentry\" {0}>\n"
      "  <testsuite name=\"mpisentry\" {0} skipped=\"0\">\n"
      "{1}"
      "  </testsuite>\n"
      "</testsuites>\n",
      counts, cases);
}

}  // namespace mpisentry::report
