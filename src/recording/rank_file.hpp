// A file a rank writes as its run goes (its recording, its communication
// log): made with its directory's parents, every text appended whole (a
// write a signal cut short goes on); on an error it says so once, naming the
// file, and writes no more.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mpisentry::recording {

class RankFile {
 public:
  // `what` names the file in messages ("the recording"). What is wrong when
  // it cannot be made.
  std::optional<std::string> create(const std::string& dir, const std::string& name, std::string_view what);
  void append(std::string_view text);
  void close();
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
  std::uint64_t bytes_ = 0;
};

}  // namespace mpisentry::recording
