// Quoting of arbitrary bytes (hosts, calls, file names) for the DOT and
// JUnit reports. Internal to the report module.
#pragma once

#include <string>
#include <string_view>

namespace mpisentry::report {

// A Graphviz double-quoted string. A newline becomes the line break "\n";
// other control characters and bytes that are not valid UTF-8 become '?'.
std::string dot_quote(std::string_view text);

// Text for an XML attribute's value or an element's content: markup
// characters as entities, carriage returns (and in an attribute newlines and
// tabs) as character references; other control characters and bytes that
// are not valid UTF-8 become U+FFFD.
std::string xml_escape(std::string_view text, bool attribute);

}  // namespace mpisentry::report
