// The checker's own messages (notices, errors in its input, verbose progress),
// on stderr, each line prefixed so that it is never taken for the program's.
// Only log.cpp sees spdlog: its header-only build costs every file that
// includes it more to compile than the rest of the file (docs/testing.md).
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace mpisentry::log {

enum class Level { debug, info, warn, error };

// Names the rank in every later line once MPI has told it.
void set_rank(int world_rank);

// VERBOSE 0 shows only errors and reports, 1 adds notices, 2 and more add progress.
void set_verbosity(int verbose);

// Whether a message of this level is written under the current VERBOSE.
bool shown(Level level);

// Writes one line of this level, already formatted.
void write(Level level, std::string_view message);

// Before anything that ends the job (MPI_Abort): waits, at most 2 s, until
// what this process wrote to stderr has been read from the pipe, then a
// moment more for the launcher's proxy to pass it on; otherwise the job's
// teardown may drop the last lines, the ones that say why it ended.
void wait_for_stderr_to_drain();

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) {
  if (shown(Level::info)) write(Level::info, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) {
  if (shown(Level::debug)) write(Level::debug, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void warn(fmt::format_string<Args...> format, Args&&... args) {
  if (shown(Level::warn)) write(Level::warn, fmt::format(format, std::forward<Args>(args)...));
}
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) {
  if (shown(Level::error)) write(Level::error, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace mpisentry::log
