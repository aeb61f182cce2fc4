// Stack capture (libunwind, async-signal-safe) kept apart from symbolization
// (libbacktrace with inlined frames, slow the first time: report time only).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "model/snapshot.hpp"

namespace mpisentry::stacks {

struct RawStack {
  static constexpr int kMaxFrames = 64;
  void* pcs[kMaxFrames];
  int depth = 0;
  // Index of the frame the signal interrupted (its pc is exact, not a return
  // address); -1 when the stack was not taken in a signal handler.
  int interrupted = -1;
  // The capture signal ended a system call early: the thread had entered a
  // call that sleeps when the signal arrived, and the call fails with EINTR.
  bool cut_short = false;

  // The exact pc alone (where a system call returns to, say).
  static RawStack at_pc(std::uintptr_t pc) {
    RawStack stack;
    stack.pcs[0] = reinterpret_cast<void*>(pc);
    stack.depth = 1;
    stack.interrupted = 0;
    return stack;
  }
};

// The capture signal's handler: copies the interrupted thread's stack when
// capture_thread() asked for it, and notes whether the signal cut a system
// call short (the interrupted context returns -EINTR from a syscall
// instruction), and nothing else. Async-signal-safe.
// src/signals chooses the signal and installs it (signals::install_stack_signal);
// nothing here calls sigaction.
void on_capture_signal(int signal_number, siginfo_t* info, void* context);

// Once, before the handler is installed: libunwind's one-time set-up
// (pthread_once, caches) runs on the first unwind, here, not in a handler.
void warm_up_unwinder();

// From src/signals: the signal on_capture_signal is installed on (0: none),
// and the trampoline the kernel returns to from it (the installed action's
// sa_restorer), which marks the interrupted frame in a captured stack.
void use_capture_signal(int signal_number, const void* trampoline);

// The signal in use; 0 before, or when there is none.
int capture_signal();

// From another thread of this process: interrupts the thread with kernel id
// `tid` (gettid()) with the capture signal and copies its stack, whatever
// the thread does (a system call it sleeps in may fail with EINTR). False
// when it did not answer within `timeout`, or has exited (no signal is sent
// to a thread id that may have been reused by another process). That the
// signal is still ours is signals::capture_stack's to check.
bool capture_thread(pid_t tid, RawStack& out, std::chrono::milliseconds timeout);

// What capture_asleep found.
enum class Asleep {
  NotInCall,  // not in a system call (running, blocked outside one) or gone: nothing read
  Scanned,    // asleep in a system call: its stack, read without interrupting it
  CallOnly,   // in a system call, its stack not readable: the call's pc alone
  Moved,      // its system call changed while the stack was read: the first call's pc alone
};
// When /proc/self/task/TID/syscall shows thread `tid` in a system call, reads
// its stack without interrupting it, by scanning its stack for return
// addresses.
Asleep capture_asleep(pid_t tid, RawStack& out);

// How capture_stack took a thread's stack, or why it has none.
enum class Capture {
  Unwound,   // interrupted by the capture signal: exact
  Scanned,   // asleep in a system call: read without a signal (capture_asleep)
  CallOnly,  // in system calls, its stack not readable: the call's pc alone
  None,      // it did not answer in time, has exited, or blocks the capture signal
};

// The stack of thread `tid` of this process, taken from another thread
// without cutting the program's system calls short. A thread that
// /proc/self/task/TID/syscall shows in a system call is never interrupted,
// unless `interruptible()` says its calls may be (the caller knows it is in
// the checker's own sleeps or MPI's, which go on after a signal, and wants
// the exact unwind); it is read with capture_asleep instead. Any other
// thread runs user code and gets the capture signal (when there is one),
// unless it blocks the signal (the signal would stay pending, for a
// sigwaitinfo of the program's to take). The last look at the syscall file
// and at interruptible() comes right before the signal: a thread that enters
// a system call after it gets the signal there, and the call fails with
// EINTR (RawStack::cut_short says so; logged as a warning when the thread
// was not interruptible).
Capture capture_stack(pid_t tid, RawStack& out, std::chrono::milliseconds timeout,
                      const std::function<bool()>& interruptible);

// The calling thread's own stack, without this function's frame.
// Async-signal-safe: for use inside a signal handler (the SIGTERM dump); there
// it starts at the interrupted frame once use_capture_signal() has run.
void capture_current(RawStack& out);

// Function, file:line and module of each frame, innermost first, with the
// frames of the checker, the MPI library, libc and everything after main left
// out. Return addresses are looked up at pc-1 so that the line is the call's.
std::vector<Frame> symbolize(const RawStack& stack);

// Every frame of `stack`, none left out (symbolize() is this plus user_frames).
std::vector<Frame> symbolize_every_frame(const RawStack& stack);

// Every frame of one call site (a return address), the calls inlined there
// included, innermost first.
std::vector<Frame> symbolize_call_site(const void* call_site);

// A program's call site as summaries name it: "file:line (function)". Slow
// the first time (symbolization).
std::string place_text(const void* call_site);

// The program's return address of a call that reached the checker through
// MPI's own code (a Fortran binding calling the C wrapper): `call_site`, the
// wrapper's return address, when it lies outside MPI's objects; else the
// first frame past it on the calling thread's stack that lies outside them,
// if one is among the innermost 16. It unwinds the stack: for rare calls only
// (the ones that make a handle), never in a signal handler.
const void* program_call_site(const void* call_site);

// The user's part of `frames`: main (or Fortran's MAIN__) and what it called,
// without frames of implementation modules.
std::vector<Frame> user_frames(std::vector<Frame> frames, std::string_view self_path);

// True for the checker itself (`self_path`), MPI's objects (by what they
// are: mpi_libraries::is_mpi_object), libc, libpthread, the dynamic loader,
// the vDSO, libunwind and libgfortran: frames the report does not show.
bool is_implementation_module(std::string_view path, std::string_view self_path);

// Where a frame's pc lies: a module (executable or shared object, by path) and
// the offset from that module's load address, meaningful in any process that
// loaded the same file. Every rank locates its own frames (cheap) and rank 0
// symbolizes them all (slow the first time) with a Symbolizer.
struct FrameAddress {
  std::string module;  // canonical path (realpath); empty when the pc is in no module
  std::uintptr_t offset = 0;  // pc minus the module's load bias (the pc itself without a module)
  bool return_address = true;  // false for the interrupted frame (exact pc)
  bool operator==(const FrameAddress&) const = default;
};

// Each frame of `stack` as module and offset, none left out. Not for signal
// handlers (dladdr, realpath).
std::vector<FrameAddress> locate(const RawStack& stack);

// A compact exact text form for sending over MPI; parse throws
// std::invalid_argument, saying what is wrong, on bad or truncated input.
std::string serialize(const std::vector<FrameAddress>& frames);
std::vector<FrameAddress> parse_frame_addresses(std::string_view text);

// A call site as another process of the same program file finds it: its
// offset in the program's mapping, and the file's identity (device, inode,
// size, modification time). Both 0 for a call site in any other module,
// which may lie elsewhere in another rank. Cheap: no symbolization.
struct ProgramSite {
  std::uint64_t program = 0;
  std::uint64_t offset = 0;
};
ProgramSite program_site(const void* call_site);
// This process's call site for `site`; null when this process runs another
// program file or the site is empty.
const void* local_call_site(const ProgramSite& site);

// Symbolizes frames located in another process running the same program, as
// symbolize() does those of this one (same frames, same modules' names, same
// user-frame filtering). Each module is found among this process's modules by
// canonical path; frames of a module this process has not loaded, or whose
// offset lies outside it, become Frame{"?? (+0x1234)", "", 0, module}.
// Not thread-safe: one thread (rank 0's monitor) owns it.
class Symbolizer {
 public:
  // One rank's frames; every address already seen is taken from the cache.
  std::vector<Frame> symbolize(const std::vector<FrameAddress>& frames);

  // Every frame, none left out (symbolize() is this plus user_frames).
  std::vector<Frame> symbolize_every_frame(const std::vector<FrameAddress>& frames);

  // Loads the debug info now (the slow part: every module's symbols, and the
  // lines of main's compilation unit), so that a later report is quick.
  void warm_up();

  // How many addresses had their debug info looked up (not taken from the
  // cache, not of an unknown module, not left out by symbolize() unread).
  std::size_t lookups() const { return lookups_; }

 private:
  std::vector<Frame> symbolize_frames(const std::vector<FrameAddress>& frames, bool users_only);
  // This process's module for `module`, if it has one that holds the offset: its pc.
  std::optional<std::uintptr_t> local_pc(const FrameAddress& address, bool& refreshed);
  void refresh_modules();

  std::map<std::string, std::uintptr_t> bases_;  // canonical path -> load bias (dlpi_addr)
  std::map<std::string, std::string> canonical_;  // name as loaded -> canonical path
  bool modules_loaded_ = false;
  // Every frame (inlined calls included, nothing filtered) of each address.
  std::map<std::tuple<std::string, std::uintptr_t, bool>, std::vector<Frame>> cache_;
  std::size_t lookups_ = 0;
};

}  // namespace mpisentry::stacks
