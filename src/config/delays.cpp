// INJECT-DELAYS' value: "off", or "SEED,PERCENT,DELAY".
#include "config/settings.hpp"
#include "config/text.hpp"

#include <algorithm>

namespace mpisentry::config {
namespace {

constexpr std::string_view kOff = "off";
constexpr std::string_view kExample = "e.g. 7,5,300l (seed 7, 5 % of the calls, 300 ms), or off";

}  // namespace

bool parse_delay_injection(std::string_view text, DelayInjection& out, std::string& error) {
  const std::string_view whole = trim(text);
  if (equals_ignoring_case(whole, kOff)) {
    out = DelayInjection{};
    return true;
  }
  const std::vector<std::string_view> parts = split(whole, ",");
  if (parts.size() != 3 || std::ranges::count(whole, ',') != 2) {
    error = in_quotes(whole) + ": expected SEED,PERCENT,DELAY, " + std::string(kExample);
    return false;
  }
  DelayInjection parsed;
  parsed.on = true;
  if (!read_number(parts[0], parsed.seed)) {
    error = in_quotes(whole) + ": SEED " + in_quotes(parts[0]) + " is not a whole number >= 0";
    return false;
  }
  if (!read_number(parts[1], parsed.percent) || !(parsed.percent >= 0 && parsed.percent <= 100)) {
    error = in_quotes(whole) + ": PERCENT " + in_quotes(parts[1]) + " is not a number from 0 to 100";
    return false;
  }
  std::string duration_error;
  if (!parse_duration(parts[2], parsed.delay, duration_error)) {
    error = in_quotes(whole) + ": DELAY " + duration_error;
    return false;
  }
  out = parsed;
  return true;
}

std::string format_delay_injection(const DelayInjection& injection) {
  if (!injection.on) return std::string(kOff);
  char percent[32];
  const auto end = std::to_chars(percent, percent + sizeof(percent), injection.percent).ptr;
  return std::to_string(injection.seed) + ',' + std::string(percent, end) + ',' + format_duration(injection.delay);
}

}  // namespace mpisentry::config
