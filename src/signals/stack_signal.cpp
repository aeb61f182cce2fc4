// The stack signal: which real-time signal carries stacks::on_capture_signal,
// its installation, and the policy when the program takes it (signals.hpp).
#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cerrno>
#include <mutex>

#include "log/log.hpp"
#include "signals/signals.hpp"

namespace mpisentry::signals {
namespace {

constexpr int kDefaultSignalOffset = 3;  // SIGRTMIN+3: free in MPICH/UCX ranks and mpiexec

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
  action.sa_sigaction = stacks::on_capture_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  struct sigaction installed {};
  if (sigaction(sig, &action, nullptr) != 0 || sigaction(sig, nullptr, &installed) != 0) {
    log::error("cannot install the stack capture handler for signal {}: {}; reports will show no call stacks",
               sig, std::strerror(errno));
    return false;
  }
  stacks::use_capture_signal(sig, reinterpret_cast<const void*>(installed.sa_restorer));
  return true;
}

bool handler_is_ours(int sig) {
  struct sigaction current {};
  return sigaction(sig, nullptr, &current) == 0 && (current.sa_flags & SA_SIGINFO) &&
         current.sa_sigaction == stacks::on_capture_signal;
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
    stacks::use_capture_signal(0, nullptr);
    return 0;
  }
  log::warn("the program installed a handler for signal {}; capturing stacks with signal {} from now on", taken, sig);
  return sig;
}

std::mutex stack_signal_mutex;  // one capture, or one move, at a time

}  // namespace

bool install_stack_signal(int wanted) {
  const std::lock_guard lock(stack_signal_mutex);
  if (stacks::capture_signal() != 0) return true;
  stacks::warm_up_unwinder();
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

stacks::Capture capture_stack(pid_t tid, stacks::RawStack& out, std::chrono::milliseconds timeout,
                              const std::function<bool()>& interruptible) {
  const std::lock_guard lock(stack_signal_mutex);
  const int sig = stacks::capture_signal();
  if (sig != 0 && !handler_is_ours(sig)) move_away_from(sig);
  return stacks::capture_stack(tid, out, timeout, interruptible);
}

}  // namespace mpisentry::signals
