// The checker's signals, in one place. Every handler is async-signal-safe:
// it captures a stack, sets atomics, writes a byte to a pipe, sleeps, and
// hands the signal on. The work (symbolizing, formatting, writing files,
// talking to other ranks) is done later by the checker's own threads.
//
//  - SIGTERM, SIGINT (a batch system's time limit, Ctrl-C): the rank writes
//    its call and stack (LOCAL:EXIT:SIGNAL) on the dump thread; the handler
//    waits for it at most kMaxDumpTime.
//  - SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT: the same for the thread that
//    crashed, on an alternate stack (for the thread that called MPI_Init),
//    so that a stack overflow is reported too. When the dump thread cannot
//    write in time (the crash may hold the allocator's lock), the handler
//    writes one line of its own with write(2).
//  - DUMP-SIGNAL (when set): marks a dump as requested and wakes the monitor,
//    which asks every rank for its state in its next round.
//  - STACK-SIGNAL: stacks::on_capture_signal copies the interrupted thread's
//    stack for the monitor, and nothing else. src/stacks has the capture
//    work; the choice of the signal and its installation are here.
//  - The masks: the checker's threads (the monitor's, the dump thread) block
//    SIGTERM and SIGINT (block_in_checker_thread()), so that the kernel
//    delivers them to a thread of the program, whose stack the dump shows.
//
// A child the rank forked (fork, system, popen) is no rank: there every
// handler hands the signal straight on.
//
// The contract: the checker never keeps a signalled process alive and never
// ends one that the signal would not have ended. After our handler, the
// program's own runs; when the program has none, a signal that ends the
// process is re-raised with its default action, so that the exit status and
// the core dump are what they would have been without the checker. A
// DUMP-SIGNAL without a program handler does nothing more.
//
// The policy for a handler the program installs later, on a signal we
// handle: the program keeps its handler, and it runs whenever the signal
// means something to the program. We look again before we rely on the
// signal: the ending and dump signals every monitor round
// (keep_handlers_first()), the stack signal before every capture
// (capture_stack()). What we do then differs with whose signal it is:
//  - SIGTERM, SIGINT, the crashes and DUMP-SIGNAL are sent to the program as
//    much as to us: our handler goes back in front and runs the program's
//    after it. Not once a signal that ends the process has arrived: from then
//    on the dispositions are left alone, so that a re-raised signal reaches
//    its default action.
//  - The stack signal is a real-time signal we chose because nobody used
//    it, and we send it only to ask for a stack: were we to chain, the
//    program's handler would run at every capture for a signal it never
//    got. So we leave the signal to the program and move the capture to
//    another free real-time signal, with a warning.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

#include "stacks/stacks.hpp"

namespace mpisentry::signals {

inline constexpr std::chrono::milliseconds kMaxDumpTime{2000};

// A signal that ends the process, as the dump thread gets it.
struct Ending {
  int signal_number = 0;
  pid_t tid = 0;                   // the thread that got it
  bool fatal = false;              // a crash (SIGSEGV...), not SIGTERM or SIGINT
  bool has_fault_address = false;  // the kernel gave the faulting address
  std::uintptr_t fault_address = 0;
};

// Called on the dump thread, never in a handler: may allocate, symbolize and
// write files, must not call MPI (the interrupted thread may hold MPI's
// lock). The handler stops waiting for it after kMaxDumpTime.
using DumpWriter = std::function<void(const Ending& ending, const stacks::RawStack& stack)>;

struct Handlers {
  int rank = 0;  // MPI_COMM_WORLD rank, for the line a handler writes itself
  DumpWriter write_dump;
  bool report_signals = true;  // CHECK LOCAL:EXIT:SIGNAL: the ending signals above
  int dump_signal = 0;         // DUMP-SIGNAL; 0: none
  int wake_fd = -1;            // written to, one byte, when a dump is requested
};

// Once, from MPI_Init: installs the handlers and starts the dump thread.
void install(Handlers handlers);

// Once, from MPI_Init, after install() (so that an automatic stack signal
// keeps clear of DUMP-SIGNAL): installs stacks::on_capture_signal on
// `wanted` (0: SIGRTMIN+3), or on the next real-time signal without a
// handler when the program has one there. Returns false, having logged why,
// when no signal could be had.
bool install_stack_signal(int wanted);

// stacks::capture_stack, once the stack signal is known to be still ours
// (else moved away, as the policy above says; with no signal left, threads
// asleep in system calls are still read).
stacks::Capture capture_stack(pid_t tid, stacks::RawStack& out, std::chrono::milliseconds timeout,
                              const std::function<bool()>& interruptible);

// On a thread of the checker (the monitor's): blocks SIGTERM and SIGINT.
void block_in_checker_thread();

// From the monitor, each round: a handler that the program installed since is
// kept to be run after ours, and ours is put back in front of it; nothing
// once a signal that ends the process has arrived.
void keep_handlers_first();

// The action that our handler on `signal_number` runs after its own (the
// one it took the place of: the program's or MPI's), when ours is in front
// and hands signals on; false otherwise.
bool handed_on_action(int signal_number, struct sigaction& out);

// When the latest DUMP-SIGNAL arrived (CLOCK_MONOTONIC, as std::chrono::
// steady_clock reads it) if one arrived since the last call; several count once.
std::optional<std::chrono::steady_clock::time_point> take_dump_request();

}  // namespace mpisentry::signals
