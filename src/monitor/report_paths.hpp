// Where the reports land: a relative REPORT-FILE, REPORT-JSON, REPORT-DOT,
// REPORT-HTML, REPORT-JUNIT or REPORT-SARIF (and the default report name) is taken relative to the directory the user
// started mpisentry in, which the ranks may not share (mpiexec -wdir, MPMD
// lines), else to rank 0's working directory.
#pragma once

#include <string>

namespace mpisentry::monitor {

struct ReportPaths {
  std::string text;  // REPORT-FILE or the default name, absolute
  std::string json;  // REPORT-JSON, absolute; empty: none
  std::string dot;   // REPORT-DOT, absolute; empty: none
  std::string html;  // REPORT-HTML, absolute; empty: none
  std::string junit;  // REPORT-JUNIT, absolute; empty: none
  std::string sarif;  // REPORT-SARIF, absolute; empty: none
  // Which directory relative paths were resolved against, and why, for the
  // start-up log: "the directory mpisentry started in, /home/u/run".
  std::string base;
};

// On rank 0: `asked`'s paths (its `base` unused) resolved. `launch_directory`:
// the launcher's kLaunchDirectoryVariable, null or empty without the
// launcher; used when it is a directory here. `working_directory`: rank 0's
// own. Paths that are absolute stay as given.
ReportPaths resolve_report_paths(const ReportPaths& asked, const char* launch_directory,
                                 const std::string& working_directory);

}  // namespace mpisentry::monitor
