#include "monitor/termination.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace mpisentry::monitor::termination {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT};
constexpr std::chrono::milliseconds kLinger{300};

struct sigaction program_actions[2];  // the program's handlers, by index_of(signal)

DumpWriter dump_writer;
int wake_pipe[2] = {-1, -1};
stacks::RawStack dump_stack;
std::atomic<int> dump_signal{0};
// Set by the first termination signal's handler: from then on the signals'
// dispositions are the program's (and the default actions') alone.
std::atomic<bool> terminating{false};
std::atomic<bool> dump_written{false};

int index_of(int signal_number) { return signal_number == SIGTERM ? 0 : 1; }

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

// Async-signal-safe only: capture, a pipe write, the clock, sleeps, sigaction, raise.
void on_termination(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const bool first = !terminating.exchange(true, std::memory_order_acq_rel);
  if (first) {
    stacks::capture_current(dump_stack);
    dump_signal.store(signal_number, std::memory_order_release);
    const char wake = 1;
    if (write(wake_pipe[1], &wake, 1) == 1)
      wait_up_to(kMaxDumpTime, [] { return dump_written.load(std::memory_order_acquire); });
  }
  const struct sigaction& program = program_actions[index_of(signal_number)];
  if ((program.sa_flags & SA_SIGINFO) && program.sa_sigaction) {
    program.sa_sigaction(signal_number, info, context);
  } else if (program.sa_handler == SIG_DFL) {
    // Still blocked while we run: delivered, with its default action, on return.
    signal(signal_number, SIG_DFL);
    raise(signal_number);
  } else if (program.sa_handler != SIG_IGN) {
    program.sa_handler(signal_number);
  }
  // A handler that re-raised left its signal pending until we return. The
  // first rank to exit makes the launcher kill the others: give their
  // handlers time to run first.
  if (first) wait_up_to(kLinger, [] { return false; });
  errno = saved_errno;
}

// Puts our handler in front of the program's current one, unless it is ours
// already or the program ignores the signal on purpose.
void take_signal(int signal_number) {
  struct sigaction current {};
  sigaction(signal_number, nullptr, &current);
  const bool ours = (current.sa_flags & SA_SIGINFO) && current.sa_sigaction == &on_termination;
  if (ours || (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)) return;
  struct sigaction handler {};
  handler.sa_sigaction = &on_termination;
  handler.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&handler.sa_mask);
  struct sigaction replaced {};
  sigaction(signal_number, &handler, &replaced);
  // A signal that arrived meanwhile may have set SIG_DFL to end the process:
  // hand the disposition back rather than take the signal again.
  if (terminating.load(std::memory_order_acquire))
    sigaction(signal_number, &replaced, nullptr);
  else
    program_actions[index_of(signal_number)] = replaced;
}

void write_dumps() {
  char wake = 0;
  while (read(wake_pipe[0], &wake, 1) != 1)
    if (errno != EINTR) return;
  dump_writer(dump_signal.load(std::memory_order_acquire), dump_stack);
  dump_written.store(true, std::memory_order_release);
}

}  // namespace

void install(DumpWriter writer) {
  dump_writer = std::move(writer);
  if (pipe(wake_pipe) != 0) return;
  // The dump thread must never take the signals itself.
  sigset_t blocked, previous;
  sigemptyset(&blocked);
  for (int signal_number : kSignals) sigaddset(&blocked, signal_number);
  pthread_sigmask(SIG_BLOCK, &blocked, &previous);
  std::thread(write_dumps).detach();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  keep_handlers_first();
}

void keep_handlers_first() {
  if (wake_pipe[0] < 0 || terminating.load(std::memory_order_acquire)) return;
  for (int signal_number : kSignals) take_signal(signal_number);
}

}  // namespace mpisentry::monitor::termination
