// Reading what the checker wrote and what the test programs mark, without
// depending on more of the report's layout than the stable pieces: the
// verdict line, class headers "[3]" / "[ranks 0-2 (3 ranks)]", call lines
// "MPI_Recv(...)" or "[2] MPI_Recv(...)", and stack lines
// "function (file:line)".
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace harness {

// 1-based numbers of the lines of a source file that carry the marker
// "mpisentry: blocks" and, when `shape` is not empty, "[shape]" too (for a
// program with several ways to block). Throws std::runtime_error when the
// file is unreadable.
std::vector<int> marker_lines(const std::string& source_path, const std::string& shape = "");
// 1-based numbers of the lines that carry "mpisentry: <mark>", for lines
// where a rank is found other than blocked ("mpisentry: crashes").
std::vector<int> marked_lines(const std::string& source_path, const std::string& mark);

// A regex for the stack line of `function` at source_path:line, the file
// given by full path or by name. An empty function matches any.
std::string frame_pattern(const std::string& function, const std::string& source_path, int line);

// Escapes regex metacharacters.
std::string regex_escape(const std::string& text);

// True when some line of `text` matches `pattern` (ECMAScript).
bool any_line_matches(const std::string& text, const std::string& pattern);

std::size_t count_occurrences(const std::string& text, const std::string& needle);

// "0-2,5" -> {0, 1, 2, 5}.
std::vector<int> expand_ranks(const std::string& ranks);

// The blocked calls of a report made by rank 0 (its ERROR, WARNING and INFO
// lines).
struct BlockedCalls {
  std::vector<std::vector<int>> classes;  // the ranks of each class, in report order
  std::map<int, std::string> call_of;     // each rank's call, as printed
  std::map<int, std::string> waits_for;   // what each rank waits for, as printed: "rank 1"
  // The most any class says its ranks were blocked ("blocked for 5.1-5.3 s"):
  // how long the verdict took after the ranks blocked, whatever the MPI's
  // start-up and teardown took.
  double longest_blocked_seconds = 0;
};
BlockedCalls parse_blocked_calls(const std::string& report);

}  // namespace harness
