#include "checks/thread_levels/thread_levels.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include <fmt/format.h>

#include "records/thread_state.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_serialized = false;
}

namespace {

struct ThreadLevels {
  int level = MPI_THREAD_SINGLE;
  pid_t init_thread = 0;  // the kernel's id of the thread that initialized MPI
  std::atomic<int> threads_inside{0};
};

ThreadLevels& thread_levels() {
  static ThreadLevels* const instance = new ThreadLevels;  // never destroyed: wrappers may run during exit
  return *instance;
}

// The calling thread's nesting of wrapped calls (an MPI call from an error
// handler or a reduction's function is inside its thread's first).
thread_local int depth = 0;

const char* level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

void report_thread(report::Check check, std::string what, std::string key) {
  report::Finding finding;
  finding.check = check;
  finding.summary = {std::move(what)};
  finding.parties.push_back({{world_rank()}, "calls", "", {}});
  finding.key = std::move(key);
  report(std::move(finding), /*own_stack=*/true);
}

// A thread's first call (records/thread_state.hpp). Neither this nor
// entered_mpi throws: they run inside the program's call, which goes on.
void new_thread(int id, pid_t tid) noexcept try {
  const ThreadLevels& t = thread_levels();
  if (tid == t.init_thread) return;
  report_thread(report::Check::ThreadNotMain,
                fmt::format("Thread {} (kernel thread id {}) calls MPI at {}, where only the thread that initialized "
                            "MPI (kernel thread id {}) may call it (MPI 4.1, section 11.6.3).",
                            id, tid, level_name(t.level), t.init_thread),
                fmt::format("not main {}", tid));
} catch (...) {
}

}  // namespace

void start_thread_levels(const StartContext& context) {
  ThreadLevels& t = thread_levels();
  t.level = context.thread_level;
  t.init_thread = static_cast<pid_t>(syscall(SYS_gettid));  // MPI_Init's thread
  if (on(report::Check::ThreadNotMain) && t.level <= MPI_THREAD_FUNNELED) observe_new_threads(new_thread);
  detail::watching_serialized = on(report::Check::ThreadConcurrent) && t.level == MPI_THREAD_SERIALIZED;
}

void entered_mpi() noexcept try {
  if (depth++ > 0) return;
  ThreadLevels& t = thread_levels();
  const int others = t.threads_inside.fetch_add(1, std::memory_order_acq_rel);
  if (others == 0) return;
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  report_thread(report::Check::ThreadConcurrent,
                fmt::format("Kernel thread {} calls MPI while {} other thread{} inside an MPI call, at "
                            "MPI_THREAD_SERIALIZED, where the program must make sure that no two threads call MPI at "
                            "once (MPI 4.1, section 11.6.3).",
                            tid, others, others == 1 ? " is" : "s are"),
                fmt::format("concurrent {}", tid));
} catch (...) {
}

void left_mpi() noexcept {
  if (--depth > 0) return;
  thread_levels().threads_inside.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace mpisentry::checks
