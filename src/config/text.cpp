#include "config/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>

namespace mpisentry::config {
namespace {

char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> previous(b.size() + 1), current(b.size() + 1);
  std::iota(previous.begin(), previous.end(), 0);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t substitution = previous[j - 1] + (upper(a[i - 1]) == upper(b[j - 1]) ? 0 : 1);
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, substitution});
    }
    std::swap(previous, current);
  }
  return previous[b.size()];
}

}  // namespace

std::string to_upper(std::string_view text) {
  std::string result(text);
  std::ranges::transform(result, result.begin(), upper);
  return result;
}

std::string to_lower(std::string_view text) {
  std::string result(text);
  std::ranges::transform(result, result.begin(), lower);
  return result;
}

bool equals_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return upper(x) == upper(y); });
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view whitespace = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(whitespace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(whitespace) - first + 1);
}

std::string in_quotes(std::string_view text) { return '"' + std::string(text) + '"'; }

const char* non_empty(const char* value) { return value != nullptr && *value != '\0' ? value : nullptr; }

std::string read_text_file(const std::string& path, std::string& text) {
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "r"), std::fclose);
  if (file) {
    std::array<char, 4096> buffer;
    while (const std::size_t count = std::fread(buffer.data(), 1, buffer.size(), file.get())) text.append(buffer.data(), count);
  }
  // fopen succeeds on a directory; the read then fails with EISDIR.
  if (!file || std::ferror(file.get())) return std::strerror(errno);
  return {};
}

std::vector<std::string_view> split(std::string_view text, std::string_view separators) {
  std::vector<std::string_view> pieces;
  while (!text.empty()) {
    const auto end = text.find_first_of(separators);
    if (auto piece = trim(text.substr(0, end)); !piece.empty()) pieces.push_back(piece);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return pieces;
}

std::string_view nearest(std::string_view word, std::span<const std::string_view> candidates) {
  // A third of the word may be wrong: catches typos, not unrelated names.
  std::size_t best_distance = std::max<std::size_t>(1, word.size() / 3) + 1;
  std::string_view best;
  for (const auto candidate : candidates) {
    if (const auto distance = edit_distance(word, candidate); distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace mpisentry::config
