// ITC's time syntax: terms of a decimal number and a unit letter, summed with '+'.
#include "config/settings.hpp"
#include "config/text.hpp"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace mpisentry::config {
namespace {

struct Unit {
  char letter;
  Duration::rep microseconds;
};

// Largest first, for formatting.
constexpr std::array<Unit, 7> units = {{
    {'w', 7 * 24 * 3600 * Duration::rep{1'000'000}},
    {'d', 24 * 3600 * Duration::rep{1'000'000}},
    {'h', 3600 * Duration::rep{1'000'000}},
    {'m', 60 * Duration::rep{1'000'000}},
    {'s', 1'000'000},
    {'l', 1'000},
    {'c', 1},
}};

const Unit* find_unit(char letter) {
  for (const Unit& unit : units)
    if (unit.letter == std::tolower(static_cast<unsigned char>(letter))) return &unit;
  return nullptr;
}

// One "1.5m" term, in microseconds.
bool parse_term(std::string_view term, Duration::rep& out, std::string& error) {
  if (term.starts_with('-')) {
    error = in_quotes(term) + ": negative durations are not allowed";
    return false;
  }
  const auto number_length = term.find_first_not_of("0123456789.");
  const std::string_view number = term.substr(0, number_length);
  // long double holds every 64-bit count exactly, so the largest duration reads back.
  long double value = 0;
  const auto [end, status] = std::from_chars(number.data(), number.data() + number.size(), value, std::chars_format::fixed);
  const bool too_long = status == std::errc::result_out_of_range;
  if (number.empty() || (status != std::errc{} && !too_long) || end != number.data() + number.size()) {
    error = in_quotes(term) + ": not a number with a time unit, e.g. 10s or 1m+30s";
    return false;
  }
  const std::string_view suffix = number_length == std::string_view::npos ? "" : term.substr(number_length);
  const Unit* unit = suffix.empty() ? find_unit('s') : suffix.size() == 1 ? find_unit(suffix[0]) : nullptr;
  if (unit == nullptr) {
    error = in_quotes(term) + ": unknown time unit '" + std::string(suffix) + "' (use c, l, s, m, h, d or w)";
    return false;
  }
  constexpr long double limit = 9223372036854775808.0L;  // 2^63
  const long double microseconds = value * static_cast<long double>(unit->microseconds);
  if (too_long || !(microseconds < limit)) {
    error = in_quotes(term) + ": too long (the limit is about 292000 years)";
    return false;
  }
  out = std::llroundl(microseconds);
  return true;
}

}  // namespace

bool parse_duration(std::string_view text, Duration& out, std::string& error) {
  const std::string_view whole = trim(text);
  if (whole.empty()) {
    error = "empty time; give e.g. 10s or 1m+30s";
    return false;
  }
  Duration::rep total = 0;
  std::string_view rest = whole;
  while (true) {
    const auto plus = rest.find('+');
    const std::string_view term = trim(rest.substr(0, plus));
    if (term.empty()) {
      error = in_quotes(whole) + ": empty term before or after '+'";
      return false;
    }
    Duration::rep microseconds = 0;
    if (!parse_term(term, microseconds, error)) return false;
    if (microseconds > std::numeric_limits<Duration::rep>::max() - total) {
      error = in_quotes(whole) + ": too long (the limit is about 292000 years)";
      return false;
    }
    total += microseconds;
    if (plus == std::string_view::npos) break;
    rest.remove_prefix(plus + 1);
  }
  out = Duration(total);
  return true;
}

std::string format_duration(Duration d) {
  const Duration::rep count = d.count();
  if (count == 0) return "0s";
  // One number in the largest unit that divides exactly: "90s", "250l".
  std::string single;
  for (const Unit& unit : units) {
    if (count % unit.microseconds == 0) {
      single = std::to_string(count / unit.microseconds) + unit.letter;
      break;
    }
  }
  if (count < 0) return single;
  // Or a sum of units, largest first, which is shorter for "1w+1c".
  std::string sum;
  Duration::rep rest = count;
  for (const Unit& unit : units) {
    if (rest < unit.microseconds) continue;
    if (!sum.empty()) sum += '+';
    sum += std::to_string(rest / unit.microseconds) + unit.letter;
    rest %= unit.microseconds;
  }
  return sum.size() < single.size() ? sum : single;
}

bool parse_timeout(std::string_view text, Timeout& out, std::string& error) {
  if (equals_ignoring_case(trim(text), "auto")) {
    out = Timeout{};
    return true;
  }
  Duration time{};
  if (!parse_duration(text, time, error)) {
    error += "; the key takes a time or auto";
    return false;
  }
  out = Timeout{false, time};
  return true;
}

std::string format_timeout(const Timeout& timeout) {
  return timeout.automatic ? std::string("auto") : format_duration(timeout.time);
}

}  // namespace mpisentry::config
