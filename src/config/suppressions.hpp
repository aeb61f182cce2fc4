// The suppressions file (SUPPRESSIONS), as the sanitizers' are: one report
// to leave out a line, "CHECK:fun:PATTERN", "CHECK:src:PATTERN" or
// "CHECK:lib:PATTERN". CHECK is a check's name or a pattern of names as
// CHECK lines take them ("LOCAL:*:NOT_FREED"); PATTERN is a glob ('*' any
// text, '?' one character) over a frame's function, source file or library.
// '#' starts a comment line; blank lines are skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/checks.hpp"
#include "config/loading.hpp"
#include "config/settings.hpp"

namespace mpisentry::config {

struct Suppression {
  enum class Field { Function, Source, Library };
  std::string checks;   // a pattern of check names
  Field field = Field::Function;
  std::string pattern;  // the glob
  std::string where;    // "file:line", for messages
};

// A deadlock verdict cannot be suppressed (it ends the job, which would then
// hang with nothing said), nor what each rank reports as it ends or loses a
// peer, nor a dump asked for: only the consistency checks' findings and the
// monitor's warnings, which leave the program running.
bool can_be_suppressed(const CheckInfo& check);

// The lines of `text`; each bad line is an error naming `source_name`, the
// line number, the problem and the line quoted.
std::vector<Suppression> parse_suppressions(std::string_view text, std::string_view source_name,
                                            std::vector<Problem>& errors);
// The file at `path` parsed; an error when it cannot be read.
std::vector<Suppression> read_suppressions(const std::string& path, std::vector<Problem>& errors);

// Case-sensitive, the whole of `text`: '*' matches any text, '?' one character.
bool matches_glob(std::string_view pattern, std::string_view text);

// Whether `suppression` names `check` and matches a frame given by its
// function, source file and library. A function matches with its parameter
// list ("f(int)") or without it ("f"); a file or library by its whole path
// or by its last part ("deadlock.c", "libfoo.so.1").
bool matches_check(const Suppression& suppression, std::string_view check);
bool matches_frame(const Suppression& suppression, std::string_view function, std::string_view file,
                   std::string_view library);

}  // namespace mpisentry::config
