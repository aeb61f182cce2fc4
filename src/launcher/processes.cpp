#include "launcher/processes.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <map>
#include <memory>

namespace mpisentry::launcher {
namespace {

std::string proc_path(pid_t pid, const char* file) { return "/proc/" + std::to_string(pid) + "/" + file; }

// The parent in /proc/PID/stat, "PID (COMMAND) STATE PPID ...": the command
// may hold blanks and parentheses, so count from the last ')'.
pid_t parent_of(pid_t pid) {
  std::string stat;
  if (!read_proc_file(pid, "stat", stat)) return 0;
  const auto close = stat.rfind(')');
  if (close == std::string::npos || close + 4 >= stat.size()) return 0;
  pid_t parent = 0;
  std::from_chars(stat.data() + close + 4, stat.data() + stat.size(), parent);
  return parent;
}

std::vector<pid_t> all_processes() {
  std::vector<pid_t> pids;
  const std::unique_ptr<DIR, int (*)(DIR*)> proc(opendir("/proc"), closedir);
  if (!proc) return pids;
  while (const dirent* entry = readdir(proc.get())) {
    pid_t pid = 0;
    const std::string_view name = entry->d_name;
    const auto [end, status] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (status == std::errc{} && end == name.data() + name.size()) pids.push_back(pid);
  }
  return pids;
}

}  // namespace

bool read_proc_file(pid_t pid, const char* file, std::string& text) {
  const int fd = open(proc_path(pid, file).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  text.clear();
  std::array<char, 8192> buffer;
  ssize_t count = 0;
  while ((count = read(fd, buffer.data(), buffer.size())) > 0 || (count < 0 && errno == EINTR))
    if (count > 0) text.append(buffer.data(), static_cast<std::size_t>(count));
  const int read_error = errno;
  close(fd);
  errno = read_error;
  return count == 0;
}

bool read_process_state(pid_t pid, int signal, ProcessState& state) {
  state = ProcessState{};
  state.pid = pid;
  std::string status, maps, environ_text;
  if (!read_proc_file(pid, "status", status)) return false;
  state.disposition = parse_disposition(status, signal);
  state.maps_checker = read_proc_file(pid, "maps", maps) && maps_checker(maps);
  state.has_rank = read_proc_file(pid, "environ", environ_text) && has_rank(parse_environ(environ_text));
  state.name = process_name(pid);
  return true;
}

std::string process_name(pid_t pid) {
  std::error_code error;
  const std::filesystem::path exe = std::filesystem::read_symlink(proc_path(pid, "exe"), error);
  if (!error) return exe.filename().string();
  std::string comm;
  if (read_proc_file(pid, "comm", comm) && comm.ends_with('\n')) comm.pop_back();
  return comm;
}

std::vector<pid_t> descendants(pid_t pid) {
  std::multimap<pid_t, pid_t> children;
  for (const pid_t process : all_processes()) children.emplace(parent_of(process), process);
  std::vector<pid_t> found;
  std::vector<pid_t> to_visit = {pid};
  while (!to_visit.empty()) {
    const pid_t parent = to_visit.back();
    to_visit.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto child = first; child != last; ++child) {
      found.push_back(child->second);
      to_visit.push_back(child->second);
    }
  }
  return found;
}

std::string working_directory(pid_t pid) {
  std::error_code error;
  const std::filesystem::path cwd = std::filesystem::read_symlink(proc_path(pid, "cwd"), error);
  return error ? std::string() : cwd.string();
}

}  // namespace mpisentry::launcher
