#include "monitor/in_process.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <linux/futex.h>
#include <linux/kcmp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <charconv>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "mpi_libraries/loaded.hpp"
#include "signals/signals.hpp"

namespace mpisentry::monitor::in_process {
namespace {

// glibc's own signals (SIGCANCEL, SIGSETXID): sigaction refuses them, and
// their handlers act only on signals the process sent itself.
bool glibc_internal(int signal_number) { return signal_number == 32 || signal_number == 33; }

struct Task {
  pid_t tid = 0;
  unsigned long long start = 0;  // start time in clock ticks: a reused tid is another task
};

// Written by the thread in MPI_Init; read by the monitor once `noted` is set.
std::vector<pid_t> tasks_before;
pid_t init_tid = 0;
// The other tasks as MPI_Init found them: their system-call lines and
// context switches, to see whether they slept through it.
constexpr auto kSettleBound = std::chrono::milliseconds(50);
std::vector<std::pair<std::string, std::uint64_t>> others_before;
std::vector<Task> not_program;  // born inside MPI_Init: MPI's and the checker's
bool program_handler_before[NSIG] = {};  // a handler outside the MPI libraries before MPI_Init
std::atomic<bool> noted{false};

// The numeric entries of a /proc folder: task or process ids, ascending.
std::vector<pid_t> list_tasks_of(const std::string& folder_path) {
  std::vector<pid_t> tids;
  DIR* folder = opendir(folder_path.c_str());
  if (!folder) return tids;
  while (const dirent* entry = readdir(folder)) {
    pid_t tid = 0;
    const char* name = entry->d_name;
    if (std::from_chars(name, name + std::strlen(name), tid).ec == std::errc() && tid > 0) tids.push_back(tid);
  }
  closedir(folder);
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::vector<pid_t> list_tasks() { return list_tasks_of("/proc/self/task"); }

// Field `wanted` (3 or more) of a stat file's text, after the command name
// (which may hold spaces and parentheses); empty when there is none.
std::string stat_field(const std::string& stat, int wanted) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= wanted && fields >> field; ++i)
    if (i == wanted) return field;
  return {};
}

// Field 22 of stat: the start time in clock ticks.
unsigned long long start_time(pid_t tid) {
  return std::strtoull(stat_field(stacks::read_task_file(tid, "stat"), 22).c_str(), nullptr, 10);
}

// A zombie or dead task (a main thread that called pthread_exit stays one
// until the process ends): it never runs again. Its syscall line reads "-1".
bool ended(const std::string& tasks_folder, pid_t tid) {
  const std::string state = stat_field(stacks::read_proc_file(tasks_folder + std::to_string(tid) + "/stat"), 3);
  return state == "Z" || state == "X";
}

// Voluntary and involuntary context switches, from a task's status file:
// they change whenever the task ran.
std::uint64_t switches_of(const std::string& status) {
  std::uint64_t total = 0;
  for (const char* key : {"voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"}) {
    const std::size_t at = status.find(key);
    if (at != std::string::npos) total = total * 1000003 + std::strtoull(status.c_str() + at + std::strlen(key), nullptr, 10);
  }
  return total;
}

std::uint64_t switches(pid_t tid) { return switches_of(stacks::read_task_file(tid, "status")); }

// The processes other than this one that share its memory (clone with
// CLONE_VM and without CLONE_THREAD, vfork), as the kernel tells (kcmp
// KCMP_VM): each is a child of a task of this process, of its parent
// (CLONE_PARENT) or of another such process. Nullopt when a child of this
// process cannot be told apart (kcmp refused it, or the kernel has no kcmp);
// the parent's other children that cannot be are taken not to share it: a
// process that does was made by this one, with its credentials.
std::optional<std::vector<pid_t>> memory_sharers() {
  // kcmp compares the memory of the tasks it is given: a process's first
  // task may have ended (a main thread that called pthread_exit has none),
  // so each side is one of its live tasks.
  const auto live_task_of = [](pid_t process) -> pid_t {
    const std::string tasks = "/proc/" + std::to_string(process) + "/task/";
    for (pid_t tid : list_tasks_of(tasks))
      if (!ended(tasks, tid)) return tid;
    return 0;
  };
  const pid_t me = getpid();
  const auto self = static_cast<pid_t>(syscall(SYS_gettid));
  std::vector<pid_t> candidates, sharers;
  const auto add_children_of = [&candidates](pid_t process) {
    const std::string tasks = "/proc/" + std::to_string(process) + "/task/";
    for (pid_t tid : list_tasks_of(tasks)) {
      std::istringstream children(stacks::read_proc_file(tasks + std::to_string(tid) + "/children"));
      for (pid_t child = 0; children >> child;) candidates.push_back(child);
    }
  };
  add_children_of(me);
  const std::size_t own_children = candidates.size();
  add_children_of(getppid());
  std::vector<pid_t> seen{me};
  for (std::size_t next = 0; next < candidates.size(); ++next) {
    const pid_t candidate = candidates[next];
    if (std::ranges::find(seen, candidate) != seen.end()) continue;
    seen.push_back(candidate);
    const pid_t task = live_task_of(candidate);
    if (task == 0) continue;  // gone, or a zombie
    const long same = syscall(SYS_kcmp, self, task, KCMP_VM, 0, 0);
    if (same < 0 && errno != ESRCH && next < own_children) return std::nullopt;
    if (same != 0) continue;
    sharers.push_back(candidate);
    add_children_of(candidate);
  }
  return sharers;
}

bool is_handler(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) ? action.sa_sigaction != nullptr
                                        : action.sa_handler != SIG_DFL && action.sa_handler != SIG_IGN;
}

void* handler_address(const struct sigaction& action) {
  return (action.sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(action.sa_sigaction)
                                        : reinterpret_cast<void*>(action.sa_handler);
}

bool in_checker(void* address) {
  Dl_info mine{}, theirs{};
  return dladdr(reinterpret_cast<void*>(&note_before_init), &mine) != 0 && dladdr(address, &theirs) != 0 &&
         mine.dli_fbase == theirs.dli_fbase;
}

// In one of MPI's objects (known by what they are, not by name), whose
// handlers run no program code: UCX installs its own on SIGSEGV and others as
// it loads, before main, and MPICH one on SIGUSR1 in MPI_Init.
bool in_mpi_library(void* address) { return mpi_libraries::is_mpi_code(address); }

// The signal that may run program code, or 0: a handler that is neither the
// checker's nor MPI's, also one that the checker's hands the signal on to,
// and MPI's on a signal the program had a handler for before MPI_Init (MPI
// may hand it on).
int program_signal() {
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (signal_number == SIGKILL || signal_number == SIGSTOP || glibc_internal(signal_number)) continue;
    struct sigaction action {};
    if (sigaction(signal_number, nullptr, &action) != 0 || !is_handler(action)) continue;
    if (in_checker(handler_address(action))) {
      struct sigaction handed_on {};
      if (!signals::handed_on_action(signal_number, handed_on) || !is_handler(handed_on)) continue;
      action = handed_on;
    }
    if (!in_mpi_library(handler_address(action)) || program_handler_before[signal_number]) return signal_number;
  }
  return 0;
}

bool uses_io_uring() {
  DIR* folder = opendir("/proc/self/fd");
  if (!folder) return true;
  bool found = false;
  while (const dirent* entry = readdir(folder)) {
    if (entry->d_name[0] == '.') continue;
    char target[64] = {};
    const std::string path = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t length = readlink(path.c_str(), target, sizeof(target) - 1);
    if (length > 0 && std::string_view(target, static_cast<std::size_t>(length)) == "anon_inode:[io_uring]")
      found = true;
  }
  closedir(folder);
  return found;
}

std::string fmt_why(pid_t tid, const char* what) {
  return "thread " + std::to_string(tid) + " sleeps outside MPI in " + what;
}

std::uint64_t mix(std::uint64_t digest, std::uint64_t value) {
  return (digest ^ value) * 0x100000001B3ull + 0x9E3779B97F4A7C15ull;
}

// The last look's result, for as long as nothing changed.
struct Cache {
  std::uint64_t key = 0;
  bool valid = false;
  Result result;
};
Cache cache;

// A task's system-call line and context switches: equal at two instants
// with a system call in the line, the task slept in that call in between.
std::pair<std::string, std::uint64_t> sleep_mark(pid_t tid) { return {stacks::read_task_file(tid, "syscall"), switches(tid)}; }

// The tasks born since note_before_init are MPI's and the checker's when
// nothing but the initializing thread can have started one: it was alone,
// or every other task slept in one system call all along (its line and
// context switches unchanged: a task on a CPU shows "running").
bool others_slept_through_init() {
  std::size_t other = 0;
  for (pid_t tid : tasks_before) {
    if (tid == init_tid) continue;
    const auto& [line, switched] = others_before[other++];
    const std::optional<Syscall> call = stacks::parse_syscall(line);
    if (!call || call->number < 0 || sleep_mark(tid) != std::pair{line, switched}) return false;
  }
  return true;
}

}  // namespace

void note_before_init() {
  init_tid = static_cast<pid_t>(syscall(SYS_gettid));
  // A thread made just before MPI_Init (by a library as it loads, say) may
  // not have reached its wait yet: each other task is given a few
  // milliseconds to be asleep in a system call.
  const auto give_up = std::chrono::steady_clock::now() + kSettleBound;
  do {
    tasks_before = list_tasks();
    others_before.clear();
    for (pid_t tid : tasks_before)
      if (tid != init_tid) others_before.push_back(sleep_mark(tid));
  } while (std::ranges::any_of(others_before, [](const auto& mark) {
             const std::optional<Syscall> call = stacks::parse_syscall(mark.first);
             return !call || call->number < 0;
           }) &&
           std::chrono::steady_clock::now() < give_up &&
           (std::this_thread::sleep_for(std::chrono::milliseconds(1)), true));
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    struct sigaction action {};
    program_handler_before[signal_number] = sigaction(signal_number, nullptr, &action) == 0 &&
                                            is_handler(action) && !in_mpi_library(handler_address(action));
  }
}

void note_checker_started() {
  if (others_slept_through_init())
    for (pid_t tid : list_tasks())
      if (std::ranges::find(tasks_before, tid) == tasks_before.end()) not_program.push_back({tid, start_time(tid)});
  noted.store(true, std::memory_order_release);
}

std::optional<FutexWait> futex_wait(const Syscall& call) {
  if (call.number != SYS_futex) return std::nullopt;
  const auto op = static_cast<int>(call.args[1]);
  const int command = op & FUTEX_CMD_MASK;
  if (command != FUTEX_WAIT && command != FUTEX_WAIT_BITSET) return std::nullopt;
  return FutexWait{call.args[0], call.args[3] != 0, (op & FUTEX_PRIVATE_FLAG) != 0};
}

std::vector<Mapping> parse_maps(std::string_view text) {
  std::vector<Mapping> maps;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string line(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    unsigned long long begin = 0, finish = 0;
    char permissions[5] = {};
    if (std::sscanf(line.c_str(), "%llx-%llx %4s", &begin, &finish, permissions) != 3 || std::strlen(permissions) != 4)
      continue;
    maps.push_back({begin, finish, permissions[1] == 'w', permissions[3] == 'p'});
  }
  return maps;
}

bool only_this_process_wakes(const FutexWait& wait, const std::vector<Mapping>& maps) {
  if (wait.private_flag) return true;
  // The futex word is 4 bytes, aligned: within one mapping.
  return std::any_of(maps.begin(), maps.end(), [&](const Mapping& mapping) {
    return mapping.begin <= wait.address && wait.address + 4 <= mapping.end && mapping.writable &&
           mapping.private_mapping;
  });
}

Holding decide(const std::vector<TaskWait>& outside, const Conditions& conditions) {
  if (outside.empty()) return Holding::Held;  // no task but those blocked in MPI
  if (std::any_of(outside.begin(), outside.end(), [](TaskWait wait) { return wait == TaskWait::Runs; }))
    return Holding::Runs;
  const bool all_in_process =
      std::all_of(outside.begin(), outside.end(), [](TaskWait wait) { return wait == TaskWait::InProcess; });
  return all_in_process && conditions.handlers_clear && conditions.no_io_uring ? Holding::Held : Holding::Idle;
}

Result look(const std::vector<ThreadState::Sample>& threads, pid_t self) {
  static std::mutex one_at_a_time;  // the monitor and the signal-dump thread
  std::lock_guard lock(one_at_a_time);
  Result result;
  std::unordered_map<pid_t, const ThreadState::Sample*> by_tid;
  for (const ThreadState::Sample& sample : threads)
    if (sample.tid > 0) by_tid[sample.tid] = &sample;
  const bool known = noted.load(std::memory_order_acquire);

  struct Outside {
    pid_t tid;
    Syscall call;
    std::optional<FutexWait> futex;
    bool sharer = false;  // a task of another process that shares this one's memory
  };
  std::vector<Outside> outside;
  std::uint64_t digest = 0x6A09E667F3BCC908ull;
  std::uint64_t key = 0;
  // The syscall line of a task outside MPI; false when it may act.
  // False when the task may act: it runs, or is stopped (not ended).
  const auto add_outside = [&](const std::string& tasks_folder, pid_t tid, bool sharer) {
    const std::optional<Syscall> call =
        stacks::parse_syscall(stacks::read_proc_file(tasks_folder + std::to_string(tid) + "/syscall"));
    if (call && !call->in_system_call() && ended(tasks_folder, tid)) return true;
    if (!call || !call->in_system_call()) return false;
    outside.push_back({tid, *call, futex_wait(*call), sharer});
    digest = mix(digest, static_cast<std::uint64_t>(tid));
    digest = mix(digest, static_cast<std::uint64_t>(call->number));
    for (std::uint64_t arg : call->args) digest = mix(digest, arg);
    digest = mix(mix(digest, call->sp), call->pc);
    return true;
  };
  for (pid_t tid : list_tasks()) {
    if (tid == self) continue;
    if (const auto found = by_tid.find(tid); found != by_tid.end()) {
      const ThreadState::Sample& sample = *found->second;
      key = mix(key, sample.entered + sample.progress + static_cast<std::uint64_t>(tid));
      if (sample.in_call) {
        if (function_info(sample.call.function).kind == CallKind::Blocking) continue;
        return result;  // polling: the rank is not blocked
      }
    } else if (known && std::any_of(not_program.begin(), not_program.end(),
                                    [tid](const Task& task) { return task.tid == tid; }) &&
               std::any_of(not_program.begin(), not_program.end(), [tid](const Task& task) {
                 return task.tid == tid && task.start == start_time(tid);
               })) {
      continue;  // MPI's or the checker's: runs no program code
    }
    if (!add_outside("/proc/self/task/", tid, false)) return result;
    digest = mix(digest, switches(tid));
  }
  // Another process in this one's memory can act as its threads can; it is
  // never proven held.
  const std::optional<std::vector<pid_t>> sharers = memory_sharers();
  if (!sharers) return result;
  for (pid_t process : *sharers) {
    const std::string tasks = "/proc/" + std::to_string(process) + "/task/";
    const std::vector<pid_t> tids = list_tasks_of(tasks);
    if (tids.empty()) return result;
    for (pid_t tid : tids) {
      if (!add_outside(tasks, tid, true)) return result;
      digest = mix(digest, switches_of(stacks::read_proc_file(tasks + std::to_string(tid) + "/status")));
    }
  }
  result.digest = digest;
  result.tasks = outside.size();
  key = mix(key, digest);
  if (cache.valid && cache.key == key) return cache.result;

  std::vector<Mapping> maps;
  bool maps_read = false;
  std::vector<TaskWait> waits;
  std::string why;
  for (const Outside& task : outside) {
    if (task.sharer) {
      waits.push_back(TaskWait::Asleep);
      if (why.empty()) why = "process " + std::to_string(task.tid) + " shares the rank's memory (clone with CLONE_VM, vfork)";
      continue;
    }
    if (!task.futex || task.futex->timed) {
      waits.push_back(TaskWait::Asleep);
      if (why.empty())
        why = fmt_why(task.tid, task.futex ? "a futex wait with a timeout" : "a system call that may end by itself");
      continue;
    }
    if (!task.futex->private_flag && !maps_read) {
      maps = parse_maps(stacks::read_proc_file("/proc/self/maps"));
      maps_read = true;
    }
    const bool mine = only_this_process_wakes(*task.futex, maps);
    waits.push_back(mine ? TaskWait::InProcess : TaskWait::Asleep);
    if (!mine && why.empty()) why = fmt_why(task.tid, "a futex that another process may wake");
  }
  Conditions conditions;
  if (!waits.empty() && decide(waits, {true, true}) == Holding::Held) {
    const int signal_number = program_signal();
    conditions.handlers_clear = signal_number == 0;
    conditions.no_io_uring = !uses_io_uring();
    if (!conditions.handlers_clear)
      why = "the program has a handler for signal " + std::to_string(signal_number) + ", which may end a wait";
    else if (!conditions.no_io_uring)
      why = "the process uses io_uring, which may end a wait by itself";
  }
  result.holding = decide(waits, conditions);
  result.why = result.holding == Holding::Idle ? why : std::string();
  cache = {key, true, result};
  return result;
}

}  // namespace mpisentry::monitor::in_process
