// CHECK patterns (matches_check_pattern: '*' within a level, '**' across,
// case-insensitive): the matcher agrees with a plain recursive reading of
// the rule, on every check name and on a name the input gives; "CHECK
// <pattern>" lines that match nothing get a message naming the pattern.
//
// Input: the pattern, and optionally '\n' and a check name of the fuzzer's own.
#include "config/checks.hpp"
#include "config/keys.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"
#include "config/text.hpp"
#include "fuzz.hpp"

#include <vector>

using namespace mpisentry;

namespace {

// The rule read front to back, one pattern token at a time; memoized, so
// that many stars stay cheap.
class Reference {
 public:
  Reference(std::string_view pattern, std::string_view check)
      : pattern_(pattern), check_(check), memo_((pattern.size() + 1) * (check.size() + 1), kUnknown) {}
  bool matches(std::size_t p = 0, std::size_t c = 0) {
    signed char& known = memo_[p * (check_.size() + 1) + c];
    if (known != kUnknown) return known;
    bool result = false;
    if (p == pattern_.size()) {
      result = c == check_.size();
    } else if (pattern_.substr(p).starts_with("**")) {
      for (std::size_t end = c; end <= check_.size() && !result; ++end) result = matches(p + 2, end);
    } else if (pattern_[p] == '*') {
      for (std::size_t end = c; end <= check_.size() && !result; ++end) {
        result = matches(p + 1, end);
        if (end < check_.size() && check_[end] == ':') break;
      }
    } else {
      result = c < check_.size() && config::equals_ignoring_case(pattern_.substr(p, 1), check_.substr(c, 1)) &&
               matches(p + 1, c + 1);
    }
    known = result;
    return result;
  }

 private:
  static constexpr signed char kUnknown = -1;
  std::string_view pattern_, check_;
  std::vector<signed char> memo_;  // by (p, c)
};

void compare(std::string_view pattern, std::string_view check) {
  const bool matched = config::matches_check_pattern(pattern, check);
  fuzz::require(matched == Reference(pattern, check).matches(), "the matcher agrees with the reference",
                std::string(pattern) + " vs " + std::string(check) + (matched ? ": matched" : ": not matched"));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Both matchers cost pattern x name: longer inputs only slow the search.
  if (size > 256) return 0;
  const std::string_view input = fuzz::text_of(data, size);
  const auto newline = input.find('\n');
  const std::string_view pattern = input.substr(0, newline);
  if (newline != std::string_view::npos) compare(pattern, input.substr(newline + 1));
  for (const std::string_view check : config::itc_checks()) compare(pattern, check);
  for (const config::CheckInfo& check : config::switchable_checks()) compare(pattern, check.name);

  config::LoadResult result;
  config::apply_setting(config::check_key, pattern, "fuzz", result);
  for (const config::Problem& error : result.errors) {
    fuzz::require(error.where == "fuzz", "an error names where the pattern came from", error.str());
    fuzz::require(error.message.starts_with("CHECK "), "an error names the CHECK it is about", error.str());
  }
  return 0;
}
