// Quoting of arbitrary bytes (hosts, calls, file names) for the DOT report.
// Internal to the report module.
#pragma once

#include <string>
#include <string_view>

namespace mpisentry::report {

// A Graphviz double-quoted string. A newline becomes the line break "\n";
// other control characters and bytes that are not valid UTF-8 become '?'.
std::string dot_quote(std::string_view text);

}  // namespace mpisentry::report
