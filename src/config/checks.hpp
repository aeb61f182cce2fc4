// ITC's check names and the patterns of "CHECK <pattern> ON|OFF".
#pragma once

#include <span>
#include <string_view>

namespace mpisentry::config {

// All 27 checks of Intel Trace Collector, "LOCAL:EXIT:SIGNAL" ... ; mpisentry
// implements those of implemented_checks() (keys.hpp).
std::span<const std::string_view> itc_checks();

// Case-insensitive; '*' matches any text within one level (no ':'), '**'
// matches across levels.
bool matches_check_pattern(std::string_view pattern, std::string_view check);

}  // namespace mpisentry::config
