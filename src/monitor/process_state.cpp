#include "monitor/process_state.hpp"

#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "monitor/handshake.hpp"
#include "report/report.hpp"

namespace mpisentry::monitor {
namespace {

// How a process that is a zombie ended: the exit code, field 52 of its
// stat (the fields after its name start at field 3).
std::string zombie_ending(const std::string& fields) {
  std::size_t at = 0;
  for (int field = 3; field < 52 && at != std::string::npos; ++field) at = fields.find(' ', at + 1);
  if (at == std::string::npos) return "how is not known";
  const int code = std::atoi(fields.c_str() + at + 1);
  if (code & 0x7f) return "killed by " + report::signal_name(code & 0x7f);
  return fmt::format("exited with status {}", (code >> 8) & 0xff);
}

std::optional<std::string> read_stat(int pid) {
  const std::string path = fmt::format("/proc/{}/stat", pid);
  FILE* file = std::fopen(path.c_str(), "re");
  if (!file) return std::nullopt;
  char text[1024] = {};
  const std::size_t got = std::fread(text, 1, sizeof(text) - 1, file);
  std::fclose(file);
  return std::string(text, got);
}

}  // namespace

std::string process_state(const LostRank& lost) {
  if (lost.host != handshake::host_name() || lost.pid <= 0) return {};
  const std::optional<std::string> stat = read_stat(lost.pid);
  if (!stat) return fmt::format("no process {}", lost.pid);
  // "pid (comm) S ...": the state follows the last ')'.
  const std::size_t close = stat->rfind(')');
  if (close == std::string::npos || close + 2 >= stat->size()) return {};
  const char state = (*stat)[close + 2];
  if (state == 'Z') return "ended, not yet reaped, " + zombie_ending(stat->substr(close + 2));
  // Its sockets close while the kernel tears the process down.
  if (lost.how == LostRank::How::Ended) return "still ending";
  switch (state) {
    case 'T': return "stopped (SIGSTOP or a debugger)";
    case 't': return "stopped by a debugger";
    case 'D': return "in uninterruptible sleep in the kernel";
    case 'R': return "running";
    case 'S': return "asleep";
    default: return {};
  }
}

}  // namespace mpisentry::monitor
