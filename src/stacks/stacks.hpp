// Stack capture (libunwind, async-signal-safe) kept apart from symbolization
// (libbacktrace with inlined frames, slow the first time: report time only).
#pragma once

#include <pthread.h>

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "report/snapshot.hpp"

namespace mpisentry::stacks {

struct RawStack {
  static constexpr int kMaxFrames = 64;
  void* pcs[kMaxFrames];
  int depth = 0;
  // Index of the frame the signal interrupted (its pc is exact, not a return
  // address); -1 when the stack was not taken in a signal handler.
  int interrupted = -1;
};

// Once, from MPI_Init: warms up libunwind and installs the capture signal's
// handler (SIGRTMIN+3 unless taken; MPISENTRY_STACK_SIGNAL overrides).
// Returns false, having logged why, when no signal could be had.
bool install_capture_signal();

// The signal install_capture_signal() chose; 0 before, or when it failed.
int capture_signal();

// MPISENTRY_STACK_SIGNAL's value: a signal number or "SIGRTMIN+N" (or
// "SIGRTMIN"); nothing when it is neither or out of range.
std::optional<int> parse_signal(std::string_view text);

// From another thread: interrupts `thread` with the capture signal and copies
// its stack. False when it did not answer within `timeout`.
bool capture_thread(pthread_t thread, RawStack& out, std::chrono::milliseconds timeout);

// The calling thread's own stack, without this function's frame.
// Async-signal-safe: for use inside a signal handler (the SIGTERM dump); there
// it starts at the interrupted frame once install_capture_signal() has run.
void capture_current(RawStack& out);

// Function, file:line and module of each frame, innermost first, with the
// frames of the checker, the MPI library, libc and everything after main left
// out. Return addresses are looked up at pc-1 so that the line is the call's.
std::vector<Frame> symbolize(const RawStack& stack);

// Every frame of `stack`, none left out (symbolize() is this plus user_frames).
std::vector<Frame> symbolize_every_frame(const RawStack& stack);

// The user's part of `frames`: main (or Fortran's MAIN__) and what it called,
// without frames of implementation modules.
std::vector<Frame> user_frames(std::vector<Frame> frames, std::string_view self_path);

// True for the checker itself (`self_path`), the MPI library and its transports
// (libmpi*, libuc*, libhwloc, libfabric), libc, libpthread, the dynamic loader,
// the vDSO, libunwind and libgfortran: frames the report does not show.
bool is_implementation_module(std::string_view path, std::string_view self_path);

}  // namespace mpisentry::stacks
