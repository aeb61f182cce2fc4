#include "checks/thread_levels/thread_levels.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "records/handle_slots.hpp"
#include "records/thread_state.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_serialized = false;
bool watching_completions = false;
}

namespace {

struct ThreadLevels {
  int level = MPI_THREAD_SINGLE;
  pid_t init_thread = 0;  // the kernel's id of the thread that initialized MPI
  std::atomic<int> threads_inside{0};
  // LOCAL:THREAD:CONCURRENT_REQUEST: the requests that Wait and Test calls
  // are completing, by the program's variable that holds each and its
  // handle, with the call's thread and place.
  struct Completing {
    pid_t thread;
    FunctionId function;
    const void* call_site;
  };
  std::mutex completing_mutex;
  std::unordered_map<CompletingRequests::Claim, Completing, CompletingRequests::Claim::Hash> completing;
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
  // The call is made, and MPI decides what comes of it: MPICH, which runs at MPI_THREAD_MULTIPLE inside, makes
  // it as asked, and the checker must not end a run that MPI lets go on.
  finding.may_end_run = false;
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
  detail::watching_completions = on(report::Check::ThreadConcurrentRequest) && t.level == MPI_THREAD_MULTIPLE;
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

CompletingRequests::CompletingRequests(FunctionId function, int count, const MPI_Request* requests,
                                       const void* call_site) noexcept {
  if (!detail::watching_completions || requests == nullptr || count <= 0) return;
  // Not a function-try-block: a constructor's would rethrow, through noexcept.
  try {
    claim(function, count, requests, call_site);
  } catch (...) {  // the program's call is made all the same
  }
}

void CompletingRequests::claim(FunctionId function, int count, const MPI_Request* requests, const void* call_site) {
  const pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  thread_ = tid;
  ThreadLevels& t = thread_levels();
  std::vector<std::pair<MPI_Request, ThreadLevels::Completing>> others;  // reported outside the lock
  claimed_ = new Claim[static_cast<std::size_t>(count)];
  {
    const std::lock_guard lock(t.completing_mutex);
    for (int i = 0; i < count; ++i) {
      if (requests[i] == MPI_REQUEST_NULL) continue;
      const Claim claim{&requests[i], requests[i]};
      const auto [found, added] = t.completing.try_emplace(claim, tid, function, call_site);
      if (added)
        claimed_[count_++] = claim;
      else if (found->second.thread != tid)
        others.emplace_back(requests[i], found->second);
    }
  }
  for (const auto& [request, other] : others) {
    const char* name = function_info(function).name;
    report::Finding finding;
    finding.check = report::Check::ThreadConcurrentRequest;
    finding.summary = {fmt::format("Kernel thread {} calls {} on request {:#x}, which kernel thread {} is completing "
                                   "in {} at the same time: two threads must not wait on or test the same request at "
                                   "once (MPI 4.1, section 11.6.2).",
                                   tid, name, handle_slots::key_of(request) - 1, other.thread,
                                   function_info(other.function).name)};
    finding.parties.push_back({{world_rank()}, "calls", name, call_site_stack(call_site)});
    finding.parties.push_back({{world_rank()}, fmt::format("is completing it (kernel thread {})", other.thread),
                               function_info(other.function).name, call_site_stack(other.call_site)});
    finding.key = fmt::format("concurrent request {} {}", fmt::ptr(call_site), fmt::ptr(other.call_site));
    report(std::move(finding));
  }
}

void request_made(const MPI_Request* request) noexcept {
  ThreadLevels& t = thread_levels();
  const std::lock_guard lock(t.completing_mutex);
  t.completing.erase({request, *request});
}

CompletingRequests::~CompletingRequests() {
  if (claimed_ == nullptr) return;
  {
    ThreadLevels& t = thread_levels();
    const std::lock_guard lock(t.completing_mutex);
    // A claim that request_made ended may have been taken by another thread since.
    for (std::size_t i = 0; i < count_; ++i)
      if (const auto found = t.completing.find(claimed_[i]);
          found != t.completing.end() && found->second.thread == thread_)
        t.completing.erase(found);
  }
  delete[] claimed_;
}

void left_mpi() noexcept {
  if (--depth > 0) return;
  thread_levels().threads_inside.fetch_sub(1, std::memory_order_acq_rel);
}

}  // namespace mpisentry::checks
