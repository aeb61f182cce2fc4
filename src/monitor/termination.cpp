#include "monitor/termination.hpp"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace mpisentry::monitor::termination {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT};
constexpr int kMaxWaitMs = 3000;  // the dump writer's own deadline is shorter
constexpr int kLingerMs = 300;

struct sigaction program_actions[2];  // the program's handlers, by index_of(signal)

DumpWriter dump_writer;
int wake_pipe[2] = {-1, -1};
stacks::RawStack dump_stack;
std::atomic<int> dump_signal{0};
std::atomic<bool> dump_claimed{false};
std::atomic<bool> dump_written{false};

int index_of(int signal_number) { return signal_number == SIGTERM ? 0 : 1; }

void sleep_one_millisecond() {
  timespec pause{0, 1000 * 1000};
  nanosleep(&pause, nullptr);
}

// Async-signal-safe only: capture, a pipe write, sleeps, sigaction, raise.
void on_termination(int signal_number, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  bool expected = false;
  if (dump_claimed.compare_exchange_strong(expected, true)) {
    stacks::capture_current(dump_stack);
    dump_signal.store(signal_number, std::memory_order_release);
    const char wake = 1;
    if (write(wake_pipe[1], &wake, 1) == 1)
      for (int waited = 0; waited < kMaxWaitMs && !dump_written.load(std::memory_order_acquire); ++waited)
        sleep_one_millisecond();
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
  for (int waited = 0; waited < kLingerMs; ++waited) sleep_one_millisecond();
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
  sigaction(signal_number, &handler, &program_actions[index_of(signal_number)]);
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
  if (wake_pipe[0] < 0) return;
  for (int signal_number : kSignals) take_signal(signal_number);
}

}  // namespace mpisentry::monitor::termination
