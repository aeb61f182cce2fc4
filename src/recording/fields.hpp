// What the recording's and the communication log's parsers share: a line's
// error and its numbers.
#pragma once

#include <charconv>
#include <cstddef>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace mpisentry::recording {

// Throws std::invalid_argument naming the line, its text and the problem.
[[noreturn]] inline void bad_line(std::size_t line, std::string_view text, std::string_view problem) {
  throw std::invalid_argument(fmt::format("line {} (\"{}\"): {}", line, text, problem));
}

// A number of [min, max] that is all of `text`.
template <typename Int>
bool read_number(std::string_view text, Int min, Int max, Int& out) {
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), out);
  return status == std::errc{} && end == text.data() + text.size() && out >= min && out <= max;
}

// The text up to its last newline: a last line cut while it was written
// (the run ended inside the write) is not the run's.
inline std::string_view whole_lines(std::string_view text) {
  const std::size_t end = text.rfind('\n');
  return end == std::string_view::npos ? std::string_view{} : text.substr(0, end + 1);
}

}  // namespace mpisentry::recording
