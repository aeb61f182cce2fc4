// Stack capture: the handler of the capture signal runs on the interrupted
// thread and does nothing but unw_backtrace into a buffer that is allocated
// before, then publishes the result through an atomic.
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

#include "log/log.hpp"
#include "stacks/stacks.hpp"

namespace mpisentry::stacks {
namespace {

constexpr int kDefaultSignalOffset = 3;  // SIGRTMIN+3: free in MPICH/UCX ranks and mpiexec
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

bool has_handler(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) != 0 ||
         (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN);
}

// `wanted` if nothing handles it yet, else the next real-time signal that is
// free; 0 when there is none.
int first_free_signal(int wanted) {
  for (int sig = wanted; sig <= SIGRTMAX; sig = std::max(sig + 1, SIGRTMIN)) {
    if (!has_handler(sig)) return sig;
  }
  return 0;
}

bool install_handler(int sig) {
  struct sigaction action {};
  action.sa_sigaction = on_capture_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction installed {};
  if (sigaction(sig, &action, nullptr) != 0 || sigaction(sig, nullptr, &installed) != 0) {
    log::error("cannot install the stack capture handler for signal {}: {}; reports will show no call stacks",
               sig, std::strerror(errno));
    return false;
  }
  signal_trampoline.store(reinterpret_cast<const void*>(installed.sa_restorer));
  capture_signal_number.store(sig);
  return true;
}

bool handler_is_ours(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
         current.sa_sigaction == on_capture_signal;
}

// The program installed its own handler for our signal after we did: it
// keeps it, and the capture moves to another free real-time signal. Returns
// the signal now in use; 0 when there is none.
int move_away_from(int taken) {
  int sig = first_free_signal(taken + 1);
  if (sig == 0) sig = first_free_signal(SIGRTMIN);
  if (sig == 0 || !install_handler(sig)) {
    log::error("the program installed a handler for signal {}, the stack capture signal, and no other real-time "
               "signal is free; reports will show no call stacks", taken);
    capture_signal_number.store(0);
    return 0;
  }
  log::warn("the program installed a handler for signal {}; capturing stacks with signal {} from now on", taken, sig);
  return sig;
}

}  // namespace

bool install_capture_signal(int wanted) {
  if (capture_signal_number.load() != 0) return true;

  // libunwind's one-time set-up (pthread_once, caches) runs on the first unwind: here, not in a handler.
  void* warm_up[4];
  unw_backtrace(warm_up, 4);

  const bool chosen_by_user = wanted != 0;
  if (!chosen_by_user) wanted = SIGRTMIN + kDefaultSignalOffset;
  const int sig = first_free_signal(wanted);
  if (sig == 0) {
    log::error("no free signal for stack capture: signal {} and every real-time signal after it have handlers; "
               "reports will show no call stacks", wanted);
    return false;
  }
  if (sig != wanted && chosen_by_user)
    log::warn("STACK-SIGNAL asks for signal {}, which already has a handler; capturing stacks with signal {}", wanted, sig);
  return install_handler(sig);
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
  int sig = capture_signal_number.load();
  if (sig == 0) return false;
  if (!handler_is_ours(sig) && (sig = move_away_from(sig)) == 0) return false;

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
