// Small string helpers shared by the config reader and the launcher.
#pragma once

#include <charconv>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mpisentry::config {

std::string to_upper(std::string_view text);
std::string to_lower(std::string_view text);
bool equals_ignoring_case(std::string_view a, std::string_view b);
std::string_view trim(std::string_view text);
// "text" in double quotes, for messages.
std::string in_quotes(std::string_view text);
// Whether the whole of `text` is a number of `Number`'s type, into `out`
// (std::from_chars: no blanks, no '+').
template <typename Number>
bool read_number(std::string_view text, Number& out) {
  const auto [end, status] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && status == std::errc{} && end == text.data() + text.size();
}
// `value` unless it is empty: an empty environment variable counts as unset.
const char* non_empty(const char* value);

// The whole file at `path` into `text`; empty when read, else why not
// (strerror's words: "No such file or directory").
std::string read_text_file(const std::string& path, std::string& text);

// Pieces of `text` between any of `separators`, trimmed, empty ones dropped.
std::vector<std::string_view> split(std::string_view text, std::string_view separators);

// The candidate closest to `word` by case-insensitive edit distance, if it is
// close enough to be a likely typo; empty otherwise.
std::string_view nearest(std::string_view word, std::span<const std::string_view> candidates);

}  // namespace mpisentry::config
