// Threads of this rank that wait outside MPI: whether each is asleep in a
// wait that only its own process can end, read from /proc/self/task. Used
// only on the monitor's slow path: every thread that has called MPI is in a
// blocking call or outside MPI, at least one of each.
//
// A thread outside MPI holds its rank no more than a thread blocked in MPI
// when it sleeps in a futex wait with no timeout (FUTEX_WAIT or
// FUTEX_WAIT_BITSET) on a word that only tasks sharing this process's memory
// can wake (FUTEX_PRIVATE_FLAG, or a shared futex in a writable private
// mapping, whose key the kernel takes from this process's memory map), and no
// signal can run program code in the process. glibc's pthread_join,
// pthread_cond_wait, pthread_mutex_lock, sem_wait and std::thread::join wait
// so. Every task of the process is counted: those that called MPI by their
// records, the checker's own and MPI's (born inside MPI_Init, when only the
// initializing thread existed before it) left out, any other must be asleep
// in such a wait too. The digest changes when any of those tasks ran, so two
// looks with the same digest saw them asleep all along.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "records/thread_state.hpp"
#include "stacks/task_files.hpp"

namespace mpisentry::monitor::in_process {

// From MPI_Init: before PMPI_Init_thread, and once the checker's threads
// run. Tasks born in between are MPI's and the checker's.
void note_before_init();
void note_checker_started();

using stacks::Syscall;  // one line of /proc/self/task/TID/syscall, as the stack capture reads it

// A futex wait as the thread entered it.
struct FutexWait {
  std::uint64_t address = 0;
  bool timed = false;         // a timeout was given: it ends by itself
  bool private_flag = false;  // FUTEX_PRIVATE_FLAG: only this process's tasks can wake it
};
// nullopt when the call is not FUTEX_WAIT or FUTEX_WAIT_BITSET.
std::optional<FutexWait> futex_wait(const Syscall& call);

struct Mapping {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  bool writable = false;
  bool private_mapping = false;  // 'p', not 's'
};
std::vector<Mapping> parse_maps(std::string_view text);

// Only tasks sharing this process's memory can wake it: a private futex, or
// a shared one whose word is in a writable private mapping (the kernel makes
// the page the process's own anonymous page and keys the futex by the
// process's memory map).
bool only_this_process_wakes(const FutexWait& wait, const std::vector<Mapping>& maps);

// What a task outside MPI is doing, as read.
enum class TaskWait {
  Runs,       // on a CPU, or not readable: it may act
  Asleep,     // in a system call that may end by itself or be ended from outside
  InProcess,  // in a futex wait with no timeout that only this process can end
};

// The decision over the tasks outside MPI, pure.
enum class Holding {
  Runs,  // a task outside MPI runs: the rank may act
  Idle,  // every task outside MPI sleeps, not all provably: never a verdict, a warning after DEADLOCK-WARNING
  Held,  // every task outside MPI sleeps in a wait only the process can end, and nothing else can wake it
};
struct Conditions {
  bool handlers_clear = false;  // no signal can run program code
  bool no_io_uring = false;     // no io_uring, which can wake a futex by itself
};
Holding decide(const std::vector<TaskWait>& outside, const Conditions& conditions);

struct Result {
  Holding holding = Holding::Runs;
  std::uint64_t digest = 0;  // the tasks outside MPI, their waits and context switches
  std::size_t tasks = 0;     // how many tasks outside MPI were read
  std::string why;           // for Idle: what could not be proven
};

// Reads /proc for every task of the process; `threads` is one sample of
// every thread with a record, `self` the calling (monitor) thread's tid.
Result look(const std::vector<ThreadState::Sample>& threads, pid_t self);

}  // namespace mpisentry::monitor::in_process
