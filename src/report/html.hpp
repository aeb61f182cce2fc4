// The report as one self-contained HTML page, made from the JSON report
// (REPORT-HTML, and `mpisentry report FILE.json`): the verdict and its rule,
// every deadlock, the classes' stacks merged into one tree with their ranks
// and calls (the first screen), the wait-for graph drawn as SVG, the classes
// of ranks with their calls, and each stack folded until clicked, with its
// source lines when the files are readable where the page is made. No
// script, nothing fetched from elsewhere.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace mpisentry::report {

// What is wrong with a report file: "truncated: ...", "not JSON: ...",
// "schema \"mpisentry-report/4\": ...", "not an mpisentry report: ...".
class BadReport : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `json` is one report of schema mpisentry-report/5 (json.cpp writes it);
// `title` names it in the page (the file it came from). Throws BadReport.
std::string format_html(std::string_view json, std::string_view title);

}  // namespace mpisentry::report
