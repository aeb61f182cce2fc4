#include "report_text.hpp"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace harness {
namespace {

constexpr const char* kMarker = "mpisentry: ";

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines holding every one of `needles`.
std::vector<int> lines_with(const std::string& source_path, const std::vector<std::string>& needles) {
  std::ifstream in(source_path);
  if (!in) throw std::runtime_error("cannot read test program source " + source_path);
  std::vector<int> lines;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    bool holds_all = true;
    for (const std::string& needle : needles) holds_all = holds_all && line.find(needle) != std::string::npos;
    if (holds_all) lines.push_back(number);
  }
  return lines;
}

}  // namespace

std::vector<int> marker_lines(const std::string& source_path, const std::string& shape) {
  const std::string blocks = std::string(kMarker) + "blocks";
  if (shape.empty()) return lines_with(source_path, {blocks});
  return lines_with(source_path, {blocks, "[" + shape + "]"});
}

std::vector<int> marked_lines(const std::string& source_path, const std::string& mark) {
  return lines_with(source_path, {kMarker + mark});
}

std::string regex_escape(const std::string& text) {
  static const std::string kSpecial = R"(\^$.|?*+()[]{})";
  std::string escaped;
  for (char c : text) {
    if (kSpecial.find(c) != std::string::npos) escaped += '\\';
    escaped += c;
  }
  return escaped;
}

std::string frame_pattern(const std::string& function, const std::string& source_path, int line) {
  const std::string file_name = source_path.substr(source_path.find_last_of('/') + 1);
  // C++ names may carry their parameter list: "halo::send_boundary(int, int)".
  const std::string function_part = function.empty() ? "" : regex_escape(function) + R"((\(.*\))? )";
  return function_part + R"(\(([^\s()]*/)?)" + regex_escape(file_name) + ":" + std::to_string(line) + R"(\))";
}

bool any_line_matches(const std::string& text, const std::string& pattern) {
  const std::regex compiled(pattern);
  for (const std::string& line : split_lines(text))
    if (std::regex_search(line, compiled)) return true;
  return false;
}

std::size_t count_occurrences(const std::string& text, const std::string& needle) {
  std::size_t count = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
    ++count;
  return count;
}

std::vector<int> expand_ranks(const std::string& ranks) {
  std::vector<int> expanded;
  std::istringstream in(ranks);
  for (std::string range; std::getline(in, range, ',');) {
    const std::size_t dash = range.find('-');
    const int first = std::stoi(range.substr(0, dash));
    const int last = dash == std::string::npos ? first : std::stoi(range.substr(dash + 1));
    for (int rank = first; rank <= last; ++rank) expanded.push_back(rank);
  }
  return expanded;
}

BlockedCalls parse_blocked_calls(const std::string& report) {
  static const std::regex rank0_line(R"(^\[0\] (?:ERROR|WARNING|INFO):(.*)$)");
  static const std::regex call_line(R"(^\s*(?:\[(\d+)\]\s+)?(MPI_\w+\(.*)$)");
  static const std::regex class_header(R"(^\s*\[(?:ranks )?(\d[\d,-]*)(?: \(\d+ ranks\))?\]\s+\S)");
  // "waits for: rank 1" for the whole class, or "waits for: [0] rank 1; [1] rank 2".
  static const std::regex waits_line(R"(^\s*waits for: (.*)$)");
  static const std::regex rank_wait(R"(^\[(\d+)\] (.*)$)");
  static const std::regex blocked_for(R"(blocked for (?:[\d.]+-)?([\d.]+) s)");
  BlockedCalls calls;
  for (const std::string& line : split_lines(report)) {
    std::smatch match;
    if (!std::regex_match(line, match, rank0_line)) continue;
    const std::string body = match[1];
    if (std::regex_match(body, match, call_line)) {
      if (calls.classes.empty()) continue;  // a call named outside any class
      if (match[1].matched)
        calls.call_of[std::stoi(match[1])] = match[2];
      else
        for (int rank : calls.classes.back()) calls.call_of[rank] = match[2];
    } else if (std::regex_match(body, match, waits_line)) {
      if (calls.classes.empty()) continue;
      std::istringstream waits(match[1].str());
      for (std::string wait; std::getline(waits, wait, ';');) {
        wait.erase(0, wait.find_first_not_of(' '));
        std::smatch own;
        if (std::regex_match(wait, own, rank_wait))
          calls.waits_for[std::stoi(own[1])] = own[2];
        else
          for (int rank : calls.classes.back()) calls.waits_for[rank] = wait;
      }
    } else if (std::regex_search(body, match, class_header)) {
      calls.classes.push_back(expand_ranks(match[1]));
      if (std::regex_search(body, match, blocked_for))
        calls.longest_blocked_seconds = std::max(calls.longest_blocked_seconds, std::stod(match[1]));
    }
  }
  return calls;
}

}  // namespace harness
