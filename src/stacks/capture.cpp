// Stack capture: the handler of the capture signal runs on the interrupted
// thread and does nothing but unw_backtrace into a buffer that is allocated
// before, then publishes the result through an atomic. Which signal, and
// its installation, are src/signals' (signals::install_stack_signal).
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "stacks/stacks.hpp"

namespace mpisentry::stacks {
namespace {

// How often capture_thread looks for the answer: a thread that sleeps is
// scheduled sooner than one that spins or yields when ranks share the cores.
constexpr auto kPollInterval = std::chrono::microseconds(50);
// Room for the frames above the interrupted one (handlers, trampoline).
constexpr int kSignalFrames = 16;

std::atomic<int> capture_signal_number{0};
// The kernel returns from every handler installed through glibc's sigaction
// into this trampoline (__restore_rt), so the frame after it is the one the
// signal interrupted.
std::atomic<const void*> signal_trampoline{nullptr};

// The one capture in flight. The requester writes `target`, then arms with a
// fresh generation; the handler disarms it, fills `pcs`, then publishes `done`.
struct CaptureRequest {
  std::atomic<unsigned> armed{0};  // generation the next handler run serves; 0: none
  std::atomic<unsigned> done{0};   // generation of the last capture written
  std::atomic<pid_t> target{0};  // kernel thread id
  void* pcs[RawStack::kMaxFrames + kSignalFrames];
  int depth = 0;
};
CaptureRequest request;

}  // namespace

void on_capture_signal(int, siginfo_t*, void*) {
  const int saved_errno = errno;
  unsigned generation = request.armed.load(std::memory_order_acquire);
  // A raw gettid is async-signal-safe. Signals from anyone else, to another
  // thread, or after the requester gave up find nothing to serve.
  if (generation != 0 && request.target.load(std::memory_order_relaxed) == static_cast<pid_t>(syscall(SYS_gettid)) &&
      request.armed.compare_exchange_strong(generation, 0, std::memory_order_acq_rel)) {
    request.depth = unw_backtrace(request.pcs, RawStack::kMaxFrames + kSignalFrames);
    request.done.store(generation, std::memory_order_release);
  }
  errno = saved_errno;
}

namespace {

// Copies `pcs` into `out` from the frame the innermost signal interrupted when
// there is one, else from `skip` on.
void keep_from_interrupted_frame(void* const* pcs, int depth, int skip, RawStack& out) {
  const void* trampoline = signal_trampoline.load(std::memory_order_relaxed);
  const int trampoline_at =
      trampoline == nullptr ? depth : static_cast<int>(std::find(pcs, pcs + depth, trampoline) - pcs);
  const bool in_handler = trampoline_at + 1 < depth;
  const int first = in_handler ? trampoline_at + 1 : std::min(skip, depth);
  out.depth = std::min(depth - first, RawStack::kMaxFrames);
  std::copy_n(pcs + first, out.depth, out.pcs);
  out.interrupted = in_handler ? 0 : -1;
}

}  // namespace

void warm_up_unwinder() {
  void* warm_up[4];
  unw_backtrace(warm_up, 4);
}

void use_capture_signal(int signal_number, const void* trampoline) {
  if (trampoline) signal_trampoline.store(trampoline);
  capture_signal_number.store(signal_number);
}

int capture_signal() { return capture_signal_number.load(); }

bool capture_thread(pid_t tid, RawStack& out, std::chrono::milliseconds timeout) {
  static std::mutex one_capture_at_a_time;
  static unsigned last_generation = 0;
  // A handler that had started when an earlier request timed out may still be
  // writing the buffer (e.g. libunwind waiting for a loader lock that its
  // thread holds): the buffer is not ours until it finished.
  static unsigned unfinished_generation = 0;
  const std::lock_guard lock(one_capture_at_a_time);
  const int sig = capture_signal_number.load();
  if (sig == 0) return false;

  if (unfinished_generation != 0) {
    if (request.done.load(std::memory_order_acquire) != unfinished_generation) return false;
    unfinished_generation = 0;
  }
  if (++last_generation == 0) ++last_generation;  // 0 means "not armed"
  const unsigned generation = last_generation;

  request.target.store(tid, std::memory_order_relaxed);
  request.armed.store(generation, std::memory_order_release);
  // tgkill, unlike pthread_kill, is safe for a thread that has exited: the
  // id is checked against this process and ESRCH comes back.
  if (syscall(SYS_tgkill, getpid(), tid, sig) != 0) {
    request.armed.store(0, std::memory_order_relaxed);
    return false;
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (request.done.load(std::memory_order_acquire) != generation) {
    if (std::chrono::steady_clock::now() >= deadline) {
      unsigned expected = generation;
      if (!request.armed.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
        unfinished_generation = generation;
      }
      return false;
    }
    const timespec pause{0, std::chrono::nanoseconds(kPollInterval).count()};
    nanosleep(&pause, nullptr);
  }
  // Should the trampoline not be found, the handler's frames stay: they are
  // the checker's, which symbolize() leaves out.
  keep_from_interrupted_frame(request.pcs, request.depth, 0, out);
  return true;
}

[[gnu::noinline]] void capture_current(RawStack& out) {
  void* pcs[RawStack::kMaxFrames + kSignalFrames];
  const int depth = unw_backtrace(pcs, RawStack::kMaxFrames + kSignalFrames);
  keep_from_interrupted_frame(pcs, depth, 1, out);  // frame 0 is this function
}

}  // namespace mpisentry::stacks
