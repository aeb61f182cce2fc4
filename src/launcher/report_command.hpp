// `mpisentry report FILE.json [-o FILE.html]`: the page of a JSON report
// (report/html.hpp), FILE.html beside the report unless -o says otherwise.
// Exit status 0: written; 2: the report could not be read or is not one
// (the message names the file and what is wrong), or the page not written.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace mpisentry::launcher {

inline constexpr std::string_view kReportCommand = "report";
inline constexpr std::string_view kReportCommandName = "mpisentry report";

// `words` are those after "report".
int run_report_command(std::span<const std::string> words);

}  // namespace mpisentry::launcher
