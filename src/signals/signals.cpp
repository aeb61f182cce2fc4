#include "signals/signals.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "records/lifecycle.hpp"

namespace mpisentry::signals {
namespace {

constexpr int kTerminationSignals[] = {SIGTERM, SIGINT};
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
constexpr std::chrono::milliseconds kLinger{300};
constexpr std::size_t kAlternateStackBytes = 64 * 1024;  // libunwind and the handler, with room

enum class Kind { None, Termination, Fatal, Dump };

struct Handled {
  Kind kind = Kind::None;
  struct sigaction program {};  // the program's action, run after ours
};
Handled handled[NSIG];

Handlers settings;
int wake_pipe[2] = {-1, -1};
stacks::RawStack ending_stack;
Ending ending_seen;
// Set by the first signal that ends the process: from then on the signals'
// dispositions are the program's (and the default actions') alone.
std::atomic<bool> ending{false};
std::atomic<bool> dump_written{false};
std::atomic<long long> dump_requested_at_ns{0};  // 0: none since the last take

// Sleeps until `done()` or `limit` has passed, by the clock: a loaded machine
// stretches every sleep. Async-signal-safe when done() is.
template <typename Done>
void wait_up_to(std::chrono::milliseconds limit, Done done) {
  const auto now_ms = [] {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000LL + now.tv_nsec / 1'000'000;
  };
  const long long deadline = now_ms() + limit.count();
  const timespec pause{0, 1'000'000};
  while (!done() && now_ms() < deadline) nanosleep(&pause, nullptr);
}

void write_all(int fd, const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t written = write(fd, text, length);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return;
    text += written;
    length -= static_cast<std::size_t>(written);
  }
}

void write_text(const char* text) { write_all(STDERR_FILENO, text, strlen(text)); }

void write_number(long long number) {
  char digits[24];
  int at = sizeof(digits);
  const bool negative = number < 0;
  unsigned long long rest = negative ? 0ULL - static_cast<unsigned long long>(number) : number;
  do {
    digits[--at] = static_cast<char>('0' + rest % 10);
    rest /= 10;
  } while (rest > 0);
  if (negative) digits[--at] = '-';
  write_all(STDERR_FILENO, digits + at, sizeof(digits) - static_cast<std::size_t>(at));
}

// What the crashing rank says when the dump thread could not write in time.
void write_short_report(int signal_number) {
  const char* name = sigabbrev_np(signal_number);
  for (int line = 0; line < 2; ++line) {
    write_text("[");
    write_number(settings.rank);
    write_text(line == 0 ? "] ERROR: LOCAL:EXIT:SIGNAL: fatal error\n" : "] ERROR:    received SIG");
  }
  write_text(name ? name : "?");
  write_text(" (pid ");
  write_number(getpid());
  write_text("); the full report was not written within 2 s\n");
}

// The kernel's own report of a fault, not a kill(): it carries the address.
bool from_kernel(const siginfo_t* info) { return info != nullptr && info->si_code > 0; }

// Runs what the program asked for: its handler, or the default action of a
// signal that ends the process (re-raised, delivered once we return).
void hand_on(int signal_number, siginfo_t* info, void* context) {
  const Handled& entry = handled[signal_number];
  const struct sigaction& program = entry.program;
  if (program.sa_flags & SA_SIGINFO) {
    if (program.sa_sigaction) program.sa_sigaction(signal_number, info, context);
    return;
  }
  // A fault is delivered even where the program ignores the signal.
  const bool default_action =
      program.sa_handler == SIG_DFL || (program.sa_handler == SIG_IGN && entry.kind == Kind::Fatal && from_kernel(info));
  if (default_action) {
    if (entry.kind == Kind::Dump) return;  // the dump was asked for: the process goes on
    // Still blocked while we run: delivered, with its default action, on return.
    signal(signal_number, SIG_DFL);
    raise(signal_number);
  } else if (program.sa_handler != SIG_IGN) {
    program.sa_handler(signal_number);
  }
}

// A child the rank forked is no rank and has no checker threads: its signals
// go straight to what the program asked for.
bool handed_on_in_child(int signal_number, siginfo_t* info, void* context) {
  if (!lifecycle::in_forked_child()) return false;
  hand_on(signal_number, info, context);
  return true;
}

// Async-signal-safe only: capture, a pipe write, the clock, sleeps, sigaction, raise.
void on_ending(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (handed_on_in_child(signal_number, info, context)) {
    errno = saved_errno;
    return;
  }
  const bool fatal = handled[signal_number].kind == Kind::Fatal;
  const bool first = !ending.exchange(true, std::memory_order_acq_rel);
  if (first) {
    stacks::capture_current(ending_stack);
    ending_seen = Ending{signal_number, static_cast<pid_t>(syscall(SYS_gettid)), fatal, fatal && from_kernel(info),
                         fatal && from_kernel(info) ? reinterpret_cast<std::uintptr_t>(info->si_addr) : 0};
    const char wake = 1;
    if (write(wake_pipe[1], &wake, 1) == 1)
      wait_up_to(kMaxDumpTime, [] { return dump_written.load(std::memory_order_acquire); });
    if (fatal && !dump_written.load(std::memory_order_acquire)) write_short_report(signal_number);
  } else {
    // Another signal while the first one's dump is being written, taken by
    // another thread (at a batch time limit, Slurm's step daemon and srun
    // both send SIGTERM): the dump first, then the default action.
    wait_up_to(kMaxDumpTime, [] { return dump_written.load(std::memory_order_acquire); });
  }
  hand_on(signal_number, info, context);
  // A handler that re-raised left its signal pending until we return. The
  // first rank to exit makes the launcher kill the others: give their
  // termination handlers time to run first.
  if (first && !fatal) wait_up_to(kLinger, [] { return false; });
  errno = saved_errno;
}

void on_dump_request(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (handed_on_in_child(signal_number, info, context)) {
    errno = saved_errno;
    return;
  }
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  dump_requested_at_ns.store(std::max(1LL, now.tv_sec * 1'000'000'000LL + now.tv_nsec), std::memory_order_release);
  const char wake = 1;
  [[maybe_unused]] const ssize_t ignored = write(settings.wake_fd, &wake, 1);
  hand_on(signal_number, info, context);
  errno = saved_errno;
}

// Puts our handler in front of the program's current one, unless it is ours
// already or the program ignores a termination signal on purpose (nohup).
// A fault ends the process even where it is ignored, and the dump signal was
// asked for by the user.
void take_signal(int signal_number) {
  Handled& entry = handled[signal_number];
  const auto ours = entry.kind == Kind::Dump ? &on_dump_request : &on_ending;
  struct sigaction current {};
  sigaction(signal_number, nullptr, &current);
  const bool is_ours = (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == ours;
  const bool ignored = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN;
  if (is_ours || (ignored && entry.kind == Kind::Termination)) return;
  struct sigaction handler {};
  handler.sa_sigaction = ours;
  handler.sa_flags = SA_SIGINFO | SA_RESTART | (entry.kind == Kind::Fatal ? SA_ONSTACK : 0);
  sigemptyset(&handler.sa_mask);
  struct sigaction replaced {};
  sigaction(signal_number, &handler, &replaced);
  // A signal that arrived meanwhile may have set SIG_DFL to end the process:
  // hand the disposition back rather than take the signal again.
  if (ending.load(std::memory_order_acquire))
    sigaction(signal_number, &replaced, nullptr);
  else
    entry.program = replaced;
}

// The thread that called MPI_Init gets an alternate stack, if it has none,
// so that the report of a stack overflow has a stack to run on.
void give_alternate_stack() {
  stack_t current{};
  if (sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
  void* memory = mmap(nullptr, kAlternateStackBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return;
  stack_t alternate{};
  alternate.ss_sp = memory;
  alternate.ss_size = kAlternateStackBytes;
  if (sigaltstack(&alternate, nullptr) != 0) munmap(memory, kAlternateStackBytes);
}

void write_dumps() {
  char wake = 0;
  while (read(wake_pipe[0], &wake, 1) != 1)
    if (errno != EINTR) return;
  settings.write_dump(ending_seen, ending_stack);
  dump_written.store(true, std::memory_order_release);
}

}  // namespace

void install(Handlers handlers) {
  settings = std::move(handlers);
  if (settings.report_signals) {
    if (pipe(wake_pipe) != 0) return;
    for (int signal_number : kTerminationSignals) handled[signal_number].kind = Kind::Termination;
    for (int signal_number : kFatalSignals) handled[signal_number].kind = Kind::Fatal;
    give_alternate_stack();
    // The dump thread must never take the signals itself.
    sigset_t previous;
    pthread_sigmask(SIG_BLOCK, nullptr, &previous);
    block_in_checker_thread();
    std::thread(write_dumps).detach();
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  if (settings.dump_signal > 0 && settings.dump_signal < NSIG) handled[settings.dump_signal].kind = Kind::Dump;
  keep_handlers_first();
}

void block_in_checker_thread() {
  sigset_t blocked;
  sigemptyset(&blocked);
  for (int signal_number : kTerminationSignals) sigaddset(&blocked, signal_number);
  pthread_sigmask(SIG_BLOCK, &blocked, nullptr);
}

void keep_handlers_first() {
  if (ending.load(std::memory_order_acquire)) return;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number)
    if (handled[signal_number].kind != Kind::None) take_signal(signal_number);
}

bool handed_on_action(int signal_number, struct sigaction& out) {
  if (signal_number <= 0 || signal_number >= NSIG || handled[signal_number].kind == Kind::None) return false;
  out = handled[signal_number].program;
  return true;
}

std::optional<std::chrono::steady_clock::time_point> take_dump_request() {
  const long long at = dump_requested_at_ns.exchange(0, std::memory_order_acq_rel);
  if (at == 0) return std::nullopt;
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(at));
}

}  // namespace mpisentry::signals
