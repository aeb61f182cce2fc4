#include "stacks/task_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <vector>

namespace mpisentry::stacks {

std::string read_proc_file(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) text.append(buffer, static_cast<std::size_t>(n));
  close(fd);
  return text;
}

std::string read_task_file(pid_t tid, const char* name) {
  return read_proc_file("/proc/self/task/" + std::to_string(tid) + "/" + name);
}

std::optional<Syscall> parse_syscall(std::string_view line) {
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.remove_suffix(1);
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const std::size_t space = line.find(' ');
    words.push_back(line.substr(0, space));
    if (space == std::string_view::npos) break;
    line.remove_prefix(space + 1);
  }
  const auto number = [](std::string_view word, std::uint64_t& out) {
    int base = 10;
    if (word.starts_with("0x")) {
      word.remove_prefix(2);
      base = 16;
    }
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), out, base);
    return !word.empty() && error == std::errc() && end == word.data() + word.size();
  };
  Syscall call;
  if (words.size() == 3 && words[0] == "-1") {
    if (!number(words[1], call.sp) || !number(words[2], call.pc)) return std::nullopt;
    return call;
  }
  if (words.size() != 9) return std::nullopt;
  std::uint64_t nr = 0;
  if (!number(words[0], nr) || nr > 100000) return std::nullopt;
  call.number = static_cast<long>(nr);
  for (std::size_t i = 0; i < 6; ++i)
    if (!number(words[1 + i], call.args[i])) return std::nullopt;
  if (!number(words[7], call.sp) || !number(words[8], call.pc)) return std::nullopt;
  return call;
}

std::optional<Syscall> read_syscall(pid_t tid) { return parse_syscall(read_task_file(tid, "syscall")); }

bool blocks_signal(std::string_view status, int signal_number) {
  constexpr std::string_view kKey = "\nSigBlk:";
  const std::size_t at = status.find(kKey);
  if (at == std::string_view::npos || signal_number < 1 || signal_number > 64) return false;
  std::string_view mask = status.substr(at + kKey.size());
  while (!mask.empty() && (mask.front() == ' ' || mask.front() == '\t')) mask.remove_prefix(1);
  std::uint64_t bits = 0;
  const auto [end, error] = std::from_chars(mask.data(), mask.data() + mask.size(), bits, 16);
  if (error != std::errc() || end == mask.data()) return false;
  return (bits >> (signal_number - 1)) & 1;
}

bool thread_blocks_signal(pid_t tid, int signal_number) {
  return blocks_signal(read_task_file(tid, "status"), signal_number);
}

}  // namespace mpisentry::stacks
