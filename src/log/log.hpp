// The checker's own messages (notices, errors in its input, verbose progress),
// on stderr, each line prefixed so that it is never taken for the program's.
#pragma once

#include <spdlog/spdlog.h>

namespace mpisentry::log {

// The checker's logger; created on first use.
spdlog::logger& logger();

// Names the rank in every later line once MPI has told it.
void set_rank(int world_rank);

// VERBOSE 0 shows only errors and reports, 1 adds notices, 2 and more add progress.
void set_verbosity(int verbose);

// Before anything that ends the job (MPI_Abort): waits, at most 2 s, until
// what this process wrote to stderr has been read from the pipe, then a
// moment more for the launcher's proxy to pass it on; otherwise the job's
// teardown may drop the last lines, the ones that say why it ended.
void wait_for_stderr_to_drain();

template <typename... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().info(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().debug(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().warn(fmt, std::forward<Args>(args)...);
}
template <typename... Args>
void error(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().error(fmt, std::forward<Args>(args)...);
}

}  // namespace mpisentry::log
