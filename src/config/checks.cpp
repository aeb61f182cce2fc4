#include "config/checks.hpp"

#include "config/settings.hpp"
#include "config/text.hpp"

#include <iterator>
#include <vector>

namespace mpisentry::config {
namespace {

constexpr CheckInfo info_table[] = {
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) \
  {Check::id, name, Severity::severity, &Settings::member, ends_job, itc, help},
#define MPISENTRY_REPORT(id, name, severity, help) {Check::id, name, Severity::severity, nullptr, false, false, help},
#define MPISENTRY_ITC_ONLY(name)
#include "config/checks.def"
};

constexpr CheckInfo switchable_table[] = {
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) \
  {Check::id, name, Severity::severity, &Settings::member, ends_job, itc, help},
#define MPISENTRY_REPORT(id, name, severity, help)
#define MPISENTRY_ITC_ONLY(name)
#include "config/checks.def"
};

constexpr std::string_view itc_table[] = {
#define MPISENTRY_CHECK(id, name, member, severity, default_on, ends_job, itc, help) \
  MPISENTRY_IF_ITC_##itc(name)
#define MPISENTRY_IF_ITC_true(name) name,
#define MPISENTRY_IF_ITC_false(name)
#define MPISENTRY_REPORT(id, name, severity, help)
#define MPISENTRY_ITC_ONLY(name) name,
#include "config/checks.def"
#undef MPISENTRY_IF_ITC_true
#undef MPISENTRY_IF_ITC_false
};

constexpr bool in_enum_order() {
  for (int i = 0; i < kCheckCount; ++i)
    if (static_cast<int>(info_table[i].id) != i) return false;
  return true;
}
static_assert(std::size(info_table) == kCheckCount && in_enum_order());

}  // namespace

const CheckInfo& check_info(Check check) { return info_table[static_cast<int>(check)]; }

std::span<const CheckInfo> switchable_checks() { return switchable_table; }

std::span<const std::string_view> itc_checks() { return itc_table; }

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
