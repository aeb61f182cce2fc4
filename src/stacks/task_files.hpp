// What /proc/self/task/TID says about a thread of this process, read from
// another thread without stopping or signalling it: the system call it is
// in, and the signals it blocks. The stack capture and the monitor's look at
// threads outside MPI (monitor/in_process) read the same lines.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mpisentry::stacks {

// A small /proc file in one read (the kernel makes them whole); empty when
// it cannot be read.
std::string read_proc_file(const std::string& path);
// /proc/self/task/TID/<name>.
std::string read_task_file(pid_t tid, const char* name);

// One line of /proc/self/task/TID/syscall: "NR a1 ... a6 sp pc" while the
// thread sleeps in system call NR, "-1 sp pc" while it is blocked outside
// one (a page fault, a stop), "running" while it is on a CPU or runnable.
struct Syscall {
  long number = -1;  // -1: blocked outside a system call
  std::array<std::uint64_t, 6> args{};
  std::uint64_t sp = 0;
  std::uint64_t pc = 0;  // where the thread returns to user code
  bool in_system_call() const { return number >= 0; }
  bool operator==(const Syscall&) const = default;
};
// nullopt for "running" and for anything unreadable.
std::optional<Syscall> parse_syscall(std::string_view line);
// The thread's line now; nullopt when it is running, has exited, or the
// kernel has no such file.
std::optional<Syscall> read_syscall(pid_t tid);

// Whether `signal_number` is in the SigBlk mask of a status file's text;
// false when the text has none.
bool blocks_signal(std::string_view status, int signal_number);
// The same for the thread's status now.
bool thread_blocks_signal(pid_t tid, int signal_number);

}  // namespace mpisentry::stacks
