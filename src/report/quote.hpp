// Quoting of arbitrary bytes (hosts, calls, file names) for the JSON and DOT
// reports. Internal to the report module.
#pragma once

#include <string>
#include <string_view>

namespace mpisentry::report {

// A JSON string literal, quotes included. Quotes, backslashes and control
// characters are escaped; bytes that are not valid UTF-8 become \u00XX.
std::string json_quote(std::string_view text);

// A Graphviz double-quoted string. A newline becomes the line break "\n";
// other control characters and bytes that are not valid UTF-8 become '?'.
std::string dot_quote(std::string_view text);

}  // namespace mpisentry::report
