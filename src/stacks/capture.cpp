// Stack capture: the handler of the capture signal runs on the interrupted
// thread and does nothing but unw_backtrace into a buffer that is allocated
// before, then publishes the result through an atomic. Which signal, and
// its installation, are src/signals' (signals::install_stack_signal).
// capture_stack chooses between the signal and a scan (asleep.cpp).
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "log/log.hpp"
#include "stacks/stacks.hpp"
#include "stacks/task_files.hpp"

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
  bool cut_short = false;
};
CaptureRequest request;

// The signal made a system call fail: on x86-64 the kernel returns -EINTR
// in rax and the interrupted pc follows the syscall instruction (0f 05). A
// call that the kernel restarts (SA_RESTART) is interrupted at that
// instruction instead, with its number back in rax. Elsewhere: not known.
bool cut_a_call_short(const void* context) {
#if defined(__x86_64__)
  if (context == nullptr) return false;
  const auto& registers = static_cast<const ucontext_t*>(context)->uc_mcontext.gregs;
  const auto* pc = reinterpret_cast<const unsigned char*>(registers[REG_RIP]);
  return registers[REG_RAX] == -EINTR && pc[-2] == 0x0f && pc[-1] == 0x05;
#else
  return false;
#endif
}

}  // namespace

void on_capture_signal(int, siginfo_t*, void* context) {
  const int saved_errno = errno;
  unsigned generation = request.armed.load(std::memory_order_acquire);
  // A raw gettid is async-signal-safe. Signals from anyone else, to another
  // thread, or after the requester gave up find nothing to serve.
  if (generation != 0 && request.target.load(std::memory_order_relaxed) == static_cast<pid_t>(syscall(SYS_gettid)) &&
      request.armed.compare_exchange_strong(generation, 0, std::memory_order_acq_rel)) {
    request.cut_short = cut_a_call_short(context);
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

namespace {

enum class Sent { Answered, Withheld, Failed };

// Arms the request, asks `may_send` whether the signal may go now, sends it
// and waits for the handler's answer.
Sent signal_and_wait(pid_t tid, RawStack& out, std::chrono::milliseconds timeout,
                     const std::function<bool()>& may_send) {
  static std::mutex one_capture_at_a_time;
  static unsigned last_generation = 0;
  // A handler that had started when an earlier request timed out may still be
  // writing the buffer (e.g. libunwind waiting for a loader lock that its
  // thread holds): the buffer is not ours until it finished.
  static unsigned unfinished_generation = 0;
  const std::lock_guard lock(one_capture_at_a_time);
  const int sig = capture_signal_number.load();
  if (sig == 0) return Sent::Failed;

  if (unfinished_generation != 0) {
    if (request.done.load(std::memory_order_acquire) != unfinished_generation) return Sent::Failed;
    unfinished_generation = 0;
  }
  if (++last_generation == 0) ++last_generation;  // 0 means "not armed"
  const unsigned generation = last_generation;

  request.target.store(tid, std::memory_order_relaxed);
  request.armed.store(generation, std::memory_order_release);
  // Last, right before the signal: all the rest is done already.
  if (!may_send()) {
    request.armed.store(0, std::memory_order_relaxed);
    return Sent::Withheld;
  }
  // tgkill, unlike pthread_kill, is safe for a thread that has exited: the
  // id is checked against this process and ESRCH comes back.
  if (syscall(SYS_tgkill, getpid(), tid, sig) != 0) {
    request.armed.store(0, std::memory_order_relaxed);
    return Sent::Failed;
  }

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (request.done.load(std::memory_order_acquire) != generation) {
    if (std::chrono::steady_clock::now() >= deadline) {
      unsigned expected = generation;
      if (!request.armed.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
        unfinished_generation = generation;
      }
      return Sent::Failed;
    }
    const timespec pause{0, std::chrono::nanoseconds(kPollInterval).count()};
    nanosleep(&pause, nullptr);
  }
  // Should the trampoline not be found, the handler's frames stay: they are
  // the checker's, which symbolize() leaves out.
  keep_from_interrupted_frame(request.pcs, request.depth, 0, out);
  out.cut_short = request.cut_short;
  return Sent::Answered;
}

// Where the thread was when the signal cut its call short: its innermost
// frame of the program, else the call's own function.
std::string cut_short_place(const RawStack& stack) {
  const std::vector<Frame> user = symbolize(stack);
  const std::vector<Frame> all = user.empty() ? symbolize_every_frame(stack) : user;
  if (all.empty()) return "an unknown place";
  const Frame& frame = all.front();
  return frame.file.empty() ? frame.function : fmt::format("{} ({}:{})", frame.function, frame.file, frame.line);
}

}  // namespace

bool capture_thread(pid_t tid, RawStack& out, std::chrono::milliseconds timeout) {
  return signal_and_wait(tid, out, timeout, [] { return true; }) == Sent::Answered;
}

Capture capture_stack(pid_t tid, RawStack& out, std::chrono::milliseconds timeout,
                      const std::function<bool()>& interruptible) {
  // A thread in and out of short system calls may be seen in another at
  // each look; a few looks settle nearly all.
  constexpr int kLooks = 3;
  std::optional<RawStack> last_call;  // the pc of the last system call seen, for when none settles
  for (int look = 0; look < kLooks; ++look) {
    if (!interruptible()) {
      RawStack asleep;
      switch (capture_asleep(tid, asleep)) {
        case Asleep::Scanned: out = asleep; return Capture::Scanned;
        case Asleep::CallOnly: out = asleep; return Capture::CallOnly;
        case Asleep::Moved: last_call = asleep; break;  // it may run user code now
        case Asleep::NotInCall: break;
      }
    }
    const int sig = capture_signal_number.load();
    if (sig == 0 || thread_blocks_signal(tid, sig)) break;
    bool was_interruptible = false;
    std::optional<Syscall> seen;
    const auto may_send = [&] {
      // The syscall file first: a thread seen in MPI after it can leave MPI
      // and enter a call of its own only in what is left of the window.
      seen = read_syscall(tid);
      was_interruptible = interruptible();
      return was_interruptible || !seen || !seen->in_system_call();
    };
    switch (signal_and_wait(tid, out, timeout, may_send)) {
      case Sent::Answered:
        if (out.cut_short && !was_interruptible)
          log::warn("the stack signal reached thread {} as it went to sleep in a system call at {}, which ends "
                    "early with EINTR: the thread ran user code at the last look, microseconds before the signal",
                    tid, cut_short_place(out));
        return Capture::Unwound;
      case Sent::Withheld: last_call = RawStack::at_pc(seen->pc); continue;  // in a system call since: read it there
      case Sent::Failed: return Capture::None;
    }
  }
  if (!last_call) return Capture::None;
  out = *last_call;
  return Capture::CallOnly;
}

[[gnu::noinline]] void capture_current(RawStack& out) {
  void* pcs[RawStack::kMaxFrames + kSignalFrames];
  const int depth = unw_backtrace(pcs, RawStack::kMaxFrames + kSignalFrames);
  keep_from_interrupted_frame(pcs, depth, 1, out);  // frame 0 is this function
}

}  // namespace mpisentry::stacks
