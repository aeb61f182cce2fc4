#include "recording/rank_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "log/log.hpp"

namespace mpisentry::recording {

std::optional<std::string> RankFile::create(const std::string& dir, const std::string& name, std::string_view what) {
  what_ = what;
  path_ = dir + "/" + name;
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return fmt::format("cannot create the directory of {}: {}", what_, error.message());
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) return fmt::format("cannot write {} {}: {}", what_, path_, std::strerror(errno));
  return std::nullopt;
}

void RankFile::append(std::string_view text) {
  std::size_t done = 0;
  while (fd_ >= 0 && done < text.size()) {
    const ssize_t wrote = ::write(fd_, text.data() + done, text.size() - done);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      log::error("cannot write {} {}: {}; it stops here", what_, path_, std::strerror(errno));
      close();
      return;
    }
    done += static_cast<std::size_t>(wrote);
    bytes_ += static_cast<std::uint64_t>(wrote);
  }
}

void RankFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace mpisentry::recording
