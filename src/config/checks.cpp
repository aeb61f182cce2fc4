#include "config/checks.hpp"

#include "config/text.hpp"

#include <vector>

namespace mpisentry::config {
namespace {

constexpr std::string_view itc_check_table[] = {
    "LOCAL:EXIT:SIGNAL",
    "LOCAL:EXIT:BEFORE_MPI_FINALIZE",
    "LOCAL:MPI:CALL_FAILED",
    "LOCAL:MEMORY:OVERLAP",
    "LOCAL:MEMORY:ILLEGAL_MODIFICATION",
    "LOCAL:MEMORY:INACCESSIBLE",
    "LOCAL:MEMORY:ILLEGAL_ACCESS",
    "LOCAL:MEMORY:INITIALIZATION",
    "LOCAL:REQUEST:ILLEGAL_CALL",
    "LOCAL:REQUEST:NOT_FREED",
    "LOCAL:REQUEST:PREMATURE_FREE",
    "LOCAL:DATATYPE:NOT_FREED",
    "LOCAL:BUFFER:INSUFFICIENT_BUFFER",
    "GLOBAL:DEADLOCK:HARD",
    "GLOBAL:DEADLOCK:POTENTIAL",
    "GLOBAL:DEADLOCK:NO_PROGRESS",
    "GLOBAL:MSG:DATATYPE:MISMATCH",
    "GLOBAL:MSG:DATA_TRANSMISSION_CORRUPTED",
    "GLOBAL:MSG:PENDING",
    "GLOBAL:COLLECTIVE:OPERATION_MISMATCH",
    "GLOBAL:COLLECTIVE:ROOT_MISMATCH",
    "GLOBAL:COLLECTIVE:REDUCTION_OPERATION_MISMATCH",
    "GLOBAL:COLLECTIVE:SIZE_MISMATCH",
    "GLOBAL:COLLECTIVE:DATATYPE:MISMATCH",
    "GLOBAL:COLLECTIVE:DATA_TRANSMISSION_CORRUPTED",
    "GLOBAL:COLLECTIVE:INVALID_PARAMETER",
    "GLOBAL:COLLECTIVE:COMM_FREE_MISMATCH",
};

}  // namespace

std::span<const std::string_view> itc_checks() { return itc_check_table; }

bool matches_check_pattern(std::string_view pattern, std::string_view check) {
  // matches[j]: the pattern from position i on matches check.substr(j); filled
  // from the pattern's end backwards, so the cost is pattern x check, never
  // exponential in the number of stars.
  std::vector<char> matches(check.size() + 1, false);
  matches[check.size()] = true;
  for (std::size_t i = pattern.size(); i-- > 0;) {
    const bool any_level = pattern[i] == '*' && i > 0 && pattern[i - 1] == '*';
    if (any_level) --i;  // "**" is one token
    std::vector<char> next(check.size() + 1, false);
    for (std::size_t j = check.size() + 1; j-- > 0;) {
      if (pattern[i] == '*') {
        const bool can_take = j < check.size() && (any_level || check[j] != ':');
        next[j] = matches[j] || (can_take && next[j + 1]);
      } else {
        next[j] = j < check.size() && equals_ignoring_case(pattern.substr(i, 1), check.substr(j, 1)) && matches[j + 1];
      }
    }
    matches = std::move(next);
  }
  return matches[0];
}

}  // namespace mpisentry::config
