// Report helpers and the writing of finished reports to disk.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "report/report.hpp"

namespace mpisentry::report {
namespace {

std::string write_error(const std::string& path, int error) {
  char buffer[128];
  return fmt::format("cannot write report file \"{}\": {}", path, strerror_r(error, buffer, sizeof buffer));
}

}  // namespace

std::string signal_name(int signal_number) {
  const char* abbreviation = sigabbrev_np(signal_number);
  return abbreviation ? fmt::format("SIG{}", abbreviation) : fmt::format("signal {}", signal_number);
}

DeadlockCore leading_ranks(const Report& report) {
  if (!report.culprits.empty()) return DeadlockCore{report.culprits, {}, {}};
  DeadlockCore exiting;
  for (const RankSnapshot& rank : report.ranks)
    if (rank.exit_status != RankSnapshot::kNotExiting) exiting.core.push_back(rank.rank);
  return exiting.core.empty() ? report.core : exiting;
}

// The file a whole-file write goes to first: beside `path`, hidden, renamed
// over it once complete. Empty for a path that is not a regular file (a
// pipe, a terminal: "/dev/stderr"), written in place.
static std::string partial_path(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && !S_ISREG(status.st_mode)) return {};
  const std::size_t slash = path.find_last_of('/');
  const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
  return path.substr(0, name) + "." + path.substr(name) + ".partial";
}

std::string write_file(const std::string& path, const std::string& text, bool append) {
  // A rank may be killed while it writes (a launcher ends the job on a lost
  // rank within milliseconds): a whole file is renamed into place complete,
  // so that a reader never finds half a JSON document.
  const std::string partial = append ? std::string() : partial_path(path);
  const std::string& target = partial.empty() ? path : partial;
  const int mode = O_CREAT | O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
  int fd;
  do {
    fd = ::open(target.c_str(), mode, 0644);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return write_error(path, errno);

  for (std::size_t written = 0; written < text.size();) {
    const ssize_t count = ::write(fd, text.data() + written, text.size() - written);
    if (count < 0 && errno == EINTR) continue;
    if (count < 0) {
      const int error = errno;
      ::close(fd);
      return write_error(path, error);
    }
    written += static_cast<std::size_t>(count);
  }
  // Pipes and terminals ("/dev/stderr") cannot be synced and need not be.
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
    const int error = errno;
    ::close(fd);
    return write_error(path, error);
  }
  // close may report a delayed write error (NFS); EINTR leaves fd closed on Linux.
  if (::close(fd) != 0 && errno != EINTR) return write_error(path, errno);
  if (!partial.empty() && ::rename(partial.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(partial.c_str());
    return write_error(path, error);
  }
  return {};
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t written = ::write(fd, text.data(), text.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(written));
  }
}

void write_stderr(std::string_view text) { write_all(STDERR_FILENO, text); }

}  // namespace mpisentry::report
