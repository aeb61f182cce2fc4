// Stack capture and symbolization on this test's own threads. Built with
// -g -O0 so that every function below keeps its frame and its lines.
#include <dlfcn.h>
#include <fcntl.h>
#include <mpi.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <climits>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "signals/signals.hpp"
#include "stacks/stacks.hpp"
#include "stacks/task_files.hpp"

using mpisentry::Frame;
using namespace mpisentry::stacks;
using namespace std::chrono_literals;

namespace {

// Lines of the calls that the tests expect in the symbolized stacks.
int poll_call_line = 0;
int spin_line = 0;
int raise_call_line = 0;
int capture_call_line = 0;

// Every test runs with SIGRTMIN+5 asked for and already taken, as MPICH
// takes some signals: the capture must move on to SIGRTMIN+6.
void ensure_capture_installed() {
  static const bool installed = [] {
    struct sigaction taken {};
    taken.sa_handler = [](int) {};
    sigaction(SIGRTMIN + 5, &taken, nullptr);
    return mpisentry::signals::install_stack_signal(SIGRTMIN + 5);
  }();
  REQUIRE(installed);
}

// A pipe that a thread blocks on until the test writes to it.
struct Gate {
  int fds[2];
  Gate() { REQUIRE(pipe(fds) == 0); }
  ~Gate() {
    close(fds[0]);
    close(fds[1]);
  }
  void open_once() const { REQUIRE(write(fds[1], "x", 1) == 1); }
};

// Waits for a byte on `fd`. The capture signal interrupts poll(), which is
// never restarted, hence the loop.
[[gnu::noinline]] void blocked_in_known_function(int fd) {
  pollfd readable{fd, POLLIN, 0};
  do {
    poll_call_line = __LINE__ + 1;
    poll(&readable, 1, -1);
  } while ((readable.revents & POLLIN) == 0);
  char byte;
  if (read(fd, &byte, 1) != 1) std::abort();
}

[[gnu::noinline]] void run_blocked_thread(int fd, std::atomic<pid_t>* tid) {
  tid->store(static_cast<pid_t>(syscall(SYS_gettid)));
  blocked_in_known_function(fd);
}

int inlined_call_line = 0;

// Inlined into its caller even at -O0: its frame exists only in the debug info.
[[gnu::always_inline]] inline void waits_through_inlined_call(int fd) {
  inlined_call_line = __LINE__ + 1;
  blocked_in_known_function(fd);
}

[[gnu::noinline]] void run_inlined_blocked_thread(int fd, std::atomic<pid_t>* tid) {
  tid->store(static_cast<pid_t>(syscall(SYS_gettid)));
  waits_through_inlined_call(fd);
}

// The thread is asleep in the kernel, so its stack will not change: the only
// place it can sleep is the poll in blocked_in_known_function.
void wait_until_asleep(const std::atomic<pid_t>& tid) {
  for (;;) {
    if (const pid_t id = tid.load(); id != 0) {
      std::ifstream stat("/proc/self/task/" + std::to_string(id) + "/stat");
      std::string line;
      std::getline(stat, line);
      if (line.substr(line.rfind(')') + 2, 1) == "S") return;
    }
    std::this_thread::sleep_for(1ms);
  }
}

// Builtins rather than std::atomic: at -O0 std::atomic's members are calls,
// and the interrupted pc must lie on the loop's own line.
bool spin_started = false;
bool spin_released = false;
pid_t spinning_tid = 0;

[[gnu::noinline]] void spinning_in_known_function() {
  spinning_tid = static_cast<pid_t>(syscall(SYS_gettid));
  spin_line = __LINE__ + 1;
  for (__atomic_store_n(&spin_started, true, __ATOMIC_RELEASE); !__atomic_load_n(&spin_released, __ATOMIC_ACQUIRE);) {
  }
}

RawStack stack_in_handler;  // written by the test's SIGUSR2 handler

[[gnu::noinline]] void raise_in_known_function(int sig) {
  raise_call_line = __LINE__ + 1;
  raise(sig);
}

[[gnu::noinline]] RawStack capture_in_known_function() {
  RawStack stack;
  capture_call_line = __LINE__ + 1;
  capture_current(stack);
  return stack;
}

// Runs `run` on a thread until it sleeps in its poll, captures its stack
// there, then lets it go.
RawStack capture_while_blocked(void (*run)(int, std::atomic<pid_t>*)) {
  Gate gate;
  std::atomic<pid_t> tid{0};
  std::thread blocked(run, gate.fds[0], &tid);
  wait_until_asleep(tid);
  RawStack stack;
  const bool captured = capture_thread(tid.load(), stack, 10s);
  gate.open_once();
  blocked.join();
  REQUIRE(captured);
  return stack;
}

// Index of the first frame whose function name contains `name`, or -1.
int find_frame(const std::vector<Frame>& frames, std::string_view name) {
  for (std::size_t i = 0; i < frames.size(); ++i) {
    if (frames[i].function.find(name) != std::string::npos) return static_cast<int>(i);
  }
  return -1;
}

bool is_this_file(const Frame& frame) { return frame.file.ends_with("test_stacks.cpp"); }

std::string this_executable() {
  char path[PATH_MAX];
  REQUIRE(realpath("/proc/self/exe", path) != nullptr);
  return path;
}

// What rank 0 makes of a stack that another rank located and sent, every
// frame kept: the checker's frames, which symbolize() leaves out, are this
// test's own (the library is linked in).
std::vector<Frame> symbolized_as_sent(const RawStack& stack) {
  Symbolizer symbolizer;
  return symbolizer.symbolize_every_frame(parse_frame_addresses(serialize(locate(stack))));
}

}  // namespace

TEST_CASE("the capture signal is the one asked for, or the next free one when it has a handler") {
  ensure_capture_installed();
  CHECK(capture_signal() == SIGRTMIN + 6);
}

TEST_CASE("a thread blocked in a call is captured at the call's line") {
  ensure_capture_installed();
  const RawStack stack = capture_while_blocked(run_blocked_thread);
  CHECK(stack.interrupted == 0);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  INFO("interrupted in " << frames.at(0).function << " in " << frames.at(0).module);
  // The signal lands in libc's poll, after the handler and the trampoline were dropped.
  CHECK(frames.at(0).module.ends_with("libc.so.6"));
  const int blocked_at = find_frame(frames, "blocked_in_known_function");
  REQUIRE(blocked_at > 0);
  CHECK(is_this_file(frames[blocked_at]));
  CHECK(frames[blocked_at].line == poll_call_line);
  CHECK(find_frame(frames, "run_blocked_thread") == blocked_at + 1);
  CHECK(find_frame(frames, "mpisentry::stacks::") == -1);
  CHECK(symbolized_as_sent(stack) == frames);
}

TEST_CASE("an inlined call is a frame of its own, between its callee and its caller") {
  ensure_capture_installed();
  const RawStack stack = capture_while_blocked(run_inlined_blocked_thread);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  const int inlined = find_frame(frames, "waits_through_inlined_call");
  REQUIRE(inlined > 0);
  CHECK(find_frame(frames, "blocked_in_known_function") == inlined - 1);
  CHECK(frames[inlined].line == inlined_call_line);
  CHECK(is_this_file(frames[inlined]));
  CHECK(find_frame(frames, "run_inlined_blocked_thread") == inlined + 1);
  CHECK(symbolized_as_sent(stack) == frames);
}

TEST_CASE("a thread computing is captured at the interrupted line") {
  ensure_capture_installed();
  std::thread spinning(spinning_in_known_function);
  while (!__atomic_load_n(&spin_started, __ATOMIC_ACQUIRE)) std::this_thread::sleep_for(1ms);

  RawStack stack;
  const bool captured = capture_thread(spinning_tid, stack, 10s);
  __atomic_store_n(&spin_released, true, __ATOMIC_RELEASE);
  spinning.join();

  REQUIRE(captured);
  REQUIRE(stack.interrupted == 0);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  REQUIRE(!frames.empty());
  CHECK(find_frame(frames, "spinning_in_known_function") == 0);
  CHECK(is_this_file(frames[0]));
  CHECK(frames[0].line == spin_line);

  // The interrupted frame travels as an exact pc.
  const std::vector<FrameAddress> located = locate(stack);
  CHECK_FALSE(located.at(0).return_address);
  CHECK(located.at(1).return_address);
  CHECK(symbolized_as_sent(stack) == frames);
}

TEST_CASE("a thread that blocks the signal times out and a later capture works") {
  ensure_capture_installed();
  Gate gate;
  std::atomic<bool> masked{false};
  std::atomic<pid_t> tid{0};  // set once the thread unblocks the signal
  std::atomic<pid_t> masked_tid{0};
  std::thread blocked([&] {
    masked_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    masked.store(true);
    blocked_in_known_function(gate.fds[0]);
    // Delivers the capture signal that timed out, still pending: it must be ignored.
    pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
    run_blocked_thread(gate.fds[0], &tid);
  });
  while (!masked.load()) std::this_thread::sleep_for(1ms);

  RawStack stack;
  CHECK_FALSE(capture_thread(masked_tid.load(), stack, 100ms));
  gate.open_once();
  wait_until_asleep(tid);

  const bool captured = capture_thread(masked_tid.load(), stack, 10s);
  gate.open_once();
  blocked.join();

  REQUIRE(captured);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  const int blocked_at = find_frame(frames, "blocked_in_known_function");
  REQUIRE(blocked_at > 0);
  CHECK(frames[blocked_at].line == poll_call_line);
}

TEST_CASE("a thread that has exited is not signalled: the capture fails at once") {
  ensure_capture_installed();
  std::atomic<pid_t> tid{0};
  std::thread([&] { tid.store(static_cast<pid_t>(syscall(SYS_gettid))); }).join();
  // The join returns when the kernel clears the thread's id, which is before the thread is gone: a signal sent
  // in between is accepted and never handled (seen once in a full unit run, under load).
  const std::string task = "/proc/self/task/" + std::to_string(tid.load());
  while (access(task.c_str(), F_OK) == 0) std::this_thread::sleep_for(1ms);
  RawStack stack;
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(capture_thread(tid.load(), stack, 10s));
  // ESRCH, not the timeout.
  CHECK(std::chrono::steady_clock::now() - start < 5s);

  // The capture still works afterwards.
  const RawStack later = capture_while_blocked(run_blocked_thread);
  CHECK(find_frame(symbolize_every_frame(later), "blocked_in_known_function") > 0);
}

// ---- Threads in system calls are read, not interrupted ----

int timed_recv_line = 0;

// recv on a socket with SO_RCVTIMEO: a signal handler makes it fail with
// EINTR, SA_RESTART or not (signal(7)).
struct TimedReceive {
  int fds[2] = {-1, -1};
  std::atomic<pid_t> tid{0};
  std::atomic<bool> returned{false};
  ssize_t result = 0;
  int error = 0;
  double seconds = 0;
  explicit TimedReceive(std::chrono::milliseconds timeout) {
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    const auto micros = std::chrono::microseconds(timeout).count();
    const timeval limit{static_cast<time_t>(micros / 1'000'000), static_cast<suseconds_t>(micros % 1'000'000)};
    REQUIRE(setsockopt(fds[0], SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) == 0);
  }
  ~TimedReceive() {
    close(fds[0]);
    close(fds[1]);
  }
};

[[gnu::noinline]] void receive_with_timeout(TimedReceive* receive) {
  receive->tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
  char byte;
  const auto start = std::chrono::steady_clock::now();
  timed_recv_line = __LINE__ + 1;
  receive->result = recv(receive->fds[0], &byte, 1, 0);
  receive->error = errno;
  receive->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  receive->returned.store(true);
}

// Until the thread sleeps in its recv (the system call's number in its syscall file).
void wait_until_in_recv(const TimedReceive& receive) {
  for (;;) {
    if (const pid_t tid = receive.tid.load(); tid != 0)
      if (const auto call = read_syscall(tid); call && call->number == SYS_recvfrom) return;
    std::this_thread::sleep_for(1ms);
  }
}

const std::function<bool()> kNeverInterruptible = [] { return false; };

TEST_CASE("the syscall and status lines of a thread: its call, and the signals it blocks") {
  const auto call = parse_syscall("45 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x7ffc10 0x7f0010\n");
  REQUIRE(call);
  CHECK(call->in_system_call());
  CHECK(call->pc == 0x7f0010);
  CHECK_FALSE(parse_syscall("-1 0x7ffc 0x7f00")->in_system_call());
  const std::string status = "Name:\tx\nSigPnd:\t0000000000000000\nSigBlk:\t0000000200000001\nSigIgn:\t0\n";
  CHECK(blocks_signal(status, SIGHUP));
  CHECK(blocks_signal(status, 34));
  CHECK_FALSE(blocks_signal(status, SIGINT));
  CHECK_FALSE(blocks_signal("Name:\tx\n", SIGHUP));
  // This thread's own line, read from the file.
  sigset_t hup, previous;
  sigemptyset(&hup);
  sigaddset(&hup, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &hup, &previous);
  CHECK(thread_blocks_signal(static_cast<pid_t>(syscall(SYS_gettid)), SIGHUP));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  CHECK_FALSE(thread_blocks_signal(static_cast<pid_t>(syscall(SYS_gettid)), SIGHUP));
}

TEST_CASE("a thread asleep in recv with SO_RCVTIMEO is read without a signal: its call times out as it would") {
  ensure_capture_installed();
  TimedReceive receive(1500ms);
  std::thread receiving(receive_with_timeout, &receive);
  wait_until_in_recv(receive);
  RawStack stack;
  const Capture taken = capture_stack(receive.tid.load(), stack, 10s, kNeverInterruptible);
  receiving.join();
  CHECK(taken == Capture::Scanned);
  CHECK_FALSE(stack.cut_short);
  CHECK(receive.result == -1);
  CHECK(receive.error == EAGAIN);
  CHECK(receive.seconds >= 1.5);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  const int at = find_frame(frames, "receive_with_timeout");
  REQUIRE(at > 0);
  CHECK(frames[at].line == timed_recv_line);
}

TEST_CASE("the signal cuts such a call short, and the capture says so") {
  ensure_capture_installed();
  TimedReceive receive(5000ms);
  std::thread receiving(receive_with_timeout, &receive);
  wait_until_in_recv(receive);
  RawStack stack;
  // What the stack signal did to every thread outside MPI before.
  const bool captured = capture_thread(receive.tid.load(), stack, 10s);
  receiving.join();
  REQUIRE(captured);
  CHECK(stack.cut_short);
  CHECK(receive.result == -1);
  CHECK(receive.error == EINTR);
  CHECK(receive.seconds < 5);
}

TEST_CASE("a thread the caller calls interruptible gets the signal in its system call: an exact unwind") {
  ensure_capture_installed();
  Gate gate;
  std::atomic<pid_t> tid{0};
  std::thread blocked(run_blocked_thread, gate.fds[0], &tid);
  wait_until_asleep(tid);
  RawStack stack;
  const Capture taken = capture_stack(tid.load(), stack, 10s, [] { return true; });
  gate.open_once();
  blocked.join();
  CHECK(taken == Capture::Unwound);
  // poll is not restarted after a handler: the signal ended it.
  CHECK(stack.cut_short);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  const int blocked_at = find_frame(frames, "blocked_in_known_function");
  REQUIRE(blocked_at > 0);
  CHECK(frames[blocked_at].line == poll_call_line);
}

TEST_CASE("a thread running user code gets the signal, one that blocks it gets none") {
  ensure_capture_installed();
  spin_released = false;
  spin_started = false;
  std::thread spinning(spinning_in_known_function);
  while (!__atomic_load_n(&spin_started, __ATOMIC_ACQUIRE)) std::this_thread::sleep_for(1ms);
  RawStack stack;
  const Capture taken = capture_stack(spinning_tid, stack, 10s, kNeverInterruptible);
  __atomic_store_n(&spin_released, true, __ATOMIC_RELEASE);
  spinning.join();
  CHECK(taken == Capture::Unwound);
  CHECK_FALSE(stack.cut_short);
  CHECK(find_frame(symbolize_every_frame(stack), "spinning_in_known_function") == 0);

  // Blocked, the signal would stay pending for a sigwaitinfo of the program's.
  std::atomic<bool> masked{false};
  std::atomic<bool> release{false};
  std::atomic<pid_t> masked_tid{0};
  std::string pending;
  std::thread blocking([&] {
    masked_tid.store(static_cast<pid_t>(syscall(SYS_gettid)));
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, nullptr);
    masked.store(true);
    while (!release.load()) {
    }
    sigset_t signals;
    sigpending(&signals);
    pending = sigismember(&signals, capture_signal()) ? "the capture signal" : "none";
  });
  while (!masked.load()) std::this_thread::sleep_for(1ms);
  const auto start = std::chrono::steady_clock::now();
  CHECK(capture_stack(masked_tid.load(), stack, 10s, kNeverInterruptible) == Capture::None);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  release.store(true);
  blocking.join();
  CHECK(pending == "none");
}

TEST_CASE("capture_current inside a signal handler starts at the interrupted frame") {
  ensure_capture_installed();
  struct sigaction dump {};
  dump.sa_handler = [](int) { capture_current(stack_in_handler); };
  struct sigaction previous {};
  REQUIRE(sigaction(SIGUSR2, &dump, &previous) == 0);
  raise_in_known_function(SIGUSR2);
  sigaction(SIGUSR2, &previous, nullptr);

  CHECK(stack_in_handler.interrupted == 0);
  const std::vector<Frame> frames = symbolize_every_frame(stack_in_handler);
  REQUIRE(!frames.empty());
  // raise() is interrupted inside libc, then returns to the caller's line.
  CHECK(frames[0].module.ends_with("libc.so.6"));
  const int raised_at = find_frame(frames, "raise_in_known_function");
  REQUIRE(raised_at > 0);
  CHECK(is_this_file(frames[raised_at]));
  CHECK(frames[raised_at].line == raise_call_line);
  CHECK(find_frame(frames, "mpisentry::stacks::capture_current") == -1);
  CHECK(symbolized_as_sent(stack_in_handler) == frames);
}

TEST_CASE("capture_current outside a handler starts at its caller") {
  const RawStack stack = capture_in_known_function();
  CHECK(stack.interrupted == -1);
  const std::vector<Frame> frames = symbolize_every_frame(stack);
  REQUIRE(!frames.empty());
  CHECK(find_frame(frames, "capture_in_known_function") == 0);
  CHECK(frames[0].line == capture_call_line);
}

namespace {

// The name this process loaded MPI's library as (MPI's objects are known by
// what they are, so only loaded ones count).
std::string mpi_library_name() {
  Dl_info mpi{};
  REQUIRE(dladdr(reinterpret_cast<const void*>(&PMPI_Init), &mpi) != 0);
  return mpi.dli_fname;
}

}  // namespace

TEST_CASE("implementation modules are MPI's objects, the C runtime and the checker") {
  const std::string_view self = "/opt/mpisentry/lib/libmpisentry.so";
  CHECK(is_implementation_module(mpi_library_name(), self));
  CHECK(is_implementation_module("/lib/x86_64-linux-gnu/libc.so.6", self));
  CHECK(is_implementation_module("/lib64/ld-linux-x86-64.so.2", self));
  CHECK(is_implementation_module("linux-vdso.so.1", self));
  CHECK(is_implementation_module("/usr/lib/x86_64-linux-gnu/libunwind.so.8", self));
  CHECK(is_implementation_module("/usr/lib/x86_64-linux-gnu/libgfortran.so.5", self));
  CHECK(is_implementation_module(self, self));

  CHECK_FALSE(is_implementation_module("./a.out", self));
  CHECK_FALSE(is_implementation_module("/opt/app/libphysics.so", self));
  // Named like MPI's, UCX's or MPICH's libraries, but not MPI's objects.
  CHECK_FALSE(is_implementation_module("/opt/app/libmpihelpers.so", self));
  CHECK_FALSE(is_implementation_module("/opt/app/libucs_helpers.so", self));
  CHECK_FALSE(is_implementation_module("/usr/lib/x86_64-linux-gnu/libmpi.so.40", self));  // not loaded here
  CHECK_FALSE(is_implementation_module("/usr/lib/x86_64-linux-gnu/libcrypto.so.3", self));
  CHECK_FALSE(is_implementation_module("", ""));
}

TEST_CASE("user frames run from the innermost user call to main") {
  const std::string self = "/opt/mpisentry/lib/libmpisentry.so";
  const std::string mpi = mpi_library_name();
  const auto frame = [](std::string function, std::string module) {
    return Frame{std::move(function), "", 0, std::move(module)};
  };
  const std::vector<Frame> stack = {
      frame("ucp_worker_progress", mpi),
      frame("MPI_Recv", mpi),
      frame("MPI_Recv", self),
      frame("helpers_receive", "/opt/app/libmpihelpers.so"),
      frame("exchange_halo(int)", "./a.out"),
      frame("physics::step()", "/opt/app/libphysics.so"),
      frame("main", "./a.out"),
      frame("__libc_start_call_main", "/lib/x86_64-linux-gnu/libc.so.6"),
      frame("_start", "./a.out"),
  };
  CHECK(user_frames(stack, self) == std::vector<Frame>{stack[3], stack[4], stack[5], stack[6]});

  const std::vector<Frame> fortran = {
      frame("MPI_Barrier", mpi),
      frame("mpi_barrier_", mpi),  // MPI's Fortran bindings: MPI's too (none is loaded here)
      frame("solve_", "./solver"),
      frame("MAIN__", "./solver"),
      frame("main", "./solver"),
  };
  CHECK(user_frames(fortran, self) == std::vector<Frame>{fortran[2], fortran[3]});

  // Without main (a thread of the program) every user frame stays.
  const std::vector<Frame> worker = {frame("work()", "./a.out"),
                                     frame("start_thread", "/lib/x86_64-linux-gnu/libc.so.6")};
  CHECK(user_frames(worker, self) == std::vector<Frame>{worker[0]});
}

TEST_CASE("located frames survive serialize and parse exactly") {
  const RawStack stack = capture_in_known_function();
  const std::vector<FrameAddress> located = locate(stack);
  REQUIRE(located.size() == static_cast<std::size_t>(stack.depth));
  // The executable by its real path, whatever name it was started as.
  CHECK(located[0].module == this_executable());
  CHECK(located[0].return_address);
  CHECK(parse_frame_addresses(serialize(located)) == located);

  const std::vector<FrameAddress> odd = {
      {"/opt/my app/lib physics.so", 0x1234, true},
      {"", UINTPTR_MAX, false},  // a pc in no module
      {"/opt/my app/lib physics.so", 0, false},
      {"line\nbreak and 12 digits", 0xabcdef, true},
      {"linux-vdso.so.1", 0x9ff, true},
  };
  CHECK(parse_frame_addresses(serialize(odd)) == odd);
  CHECK(parse_frame_addresses(serialize({})).empty());
}

TEST_CASE("bad or truncated frame addresses are rejected with a message") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(parse_frame_addresses(""), Contains("header"));
  CHECK_THROWS_WITH(parse_frame_addresses("garbage"), Contains("header"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 1 1\n50 /a.so\n0 10 r\n"), Contains("cut short"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 1 1\n5 /a.so\n1 10 r\n"), Contains("out of range"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 1 1\n5 /a.so\n0 10 x\n"), Contains("kind"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 1 1\n5 /a.so\n0 -10 r\n"), Contains("offset"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 1 1\n5 /a.so\n0 10 r\nmore"), Contains("after the last frame"));
  CHECK_THROWS_WITH(parse_frame_addresses("frames/1 99999999999 1\n"), Contains("larger than the text"));

  CHECK(parse_frame_addresses("frames/1 1 1\n5 /a.so\n0 10 r\n") == std::vector<FrameAddress>{{"/a.so", 0x10, true}});
  const std::string text = serialize({{"/opt/my app/libx.so", 0x1234, true}, {"/bin/app", 0x42, false}});
  REQUIRE(parse_frame_addresses(text).size() == 2);
  for (std::size_t length = 0; length < text.size(); ++length) {
    INFO("cut to " << length << " bytes");
    CHECK_THROWS_AS(parse_frame_addresses(std::string_view(text).substr(0, length)), std::invalid_argument);
  }
}

TEST_CASE("a frame of a module this process has not loaded keeps its module and offset") {
  Symbolizer symbolizer;
  CHECK(symbolizer.symbolize({{"/nonexistent/libgone.so", 0x1234, true}}) ==
        std::vector<Frame>{{"?? (+0x1234)", "", 0, "/nonexistent/libgone.so"}});
  CHECK(symbolizer.symbolize({{"", 0x7f0000001000, false}}) == std::vector<Frame>{{"?? (+0x7f0000001000)", "", 0, ""}});
  // An offset beyond the module is not taken for a pc of whatever lies there.
  const std::uintptr_t far = std::uintptr_t{1} << 46;
  CHECK(symbolizer.symbolize_every_frame({{this_executable(), far, true}}) ==
        std::vector<Frame>{{fmt::format("?? (+{:#x})", far), "", 0, this_executable()}});
}

TEST_CASE("an address that several ranks send is symbolized once") {
  const RawStack stack = capture_in_known_function();
  const std::vector<FrameAddress> rank1 = locate(stack);
  const std::vector<FrameAddress> rank2 = parse_frame_addresses(serialize(rank1));
  std::set<std::tuple<std::string, std::uintptr_t, bool>> distinct;
  for (const FrameAddress& frame : rank1) distinct.emplace(frame.module, frame.offset, frame.return_address);

  Symbolizer symbolizer;
  symbolizer.warm_up();
  CHECK(symbolizer.lookups() == 0);
  const std::vector<Frame> first = symbolizer.symbolize_every_frame(rank1);
  CHECK(symbolizer.lookups() == distinct.size());
  CHECK(symbolizer.symbolize_every_frame(rank2) == first);
  CHECK(symbolizer.lookups() == distinct.size());
  CHECK(first == symbolize_every_frame(stack));
  CHECK(find_frame(first, "capture_in_known_function") == 0);
  // The same filter as symbolize(): here it leaves nothing out but libc, the checker being this test.
  CHECK(symbolizer.symbolize(rank2) == symbolize(stack));
  CHECK(symbolizer.lookups() == distinct.size());
}

// The other process of the test below: a "rank" that locates its stack and writes it out.
TEST_CASE("child process: locate a stack and write it out", "[.][locate_child]") {
  const char* out = std::getenv("MPISENTRY_TEST_LOCATE_OUT");
  if (out == nullptr) return;
  const RawStack stack = capture_in_known_function();
  std::ofstream file(out, std::ios::binary);
  file << reinterpret_cast<std::uintptr_t>(stack.pcs[0]) << '\n' << serialize(locate(stack));
}

TEST_CASE("frames located in another process of the program are symbolized in this one") {
  char path[] = "/tmp/mpisentry_test_locate_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  const std::string self = this_executable();
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
    setenv("MPISENTRY_TEST_LOCATE_OUT", path, 1);
    execl(self.c_str(), self.c_str(), "[locate_child]", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  unlink(path);
  REQUIRE((WIFEXITED(status) && WEXITSTATUS(status) == 0));

  std::uintptr_t child_pc = 0;
  text >> child_pc;
  text.get();
  const std::vector<FrameAddress> sent = parse_frame_addresses(text.str().substr(text.tellg()));
  const RawStack here = capture_in_known_function();
  if (child_pc == reinterpret_cast<std::uintptr_t>(here.pcs[0]))
    WARN("address space layout randomization is off: both processes had the same addresses");

  const std::vector<Frame> frames = Symbolizer().symbolize_every_frame(sent);
  const std::vector<Frame> local = symbolize_every_frame(here);
  REQUIRE(frames.size() >= 2);
  CHECK(frames[0] == local.at(0));
  CHECK(find_frame(frames, "capture_in_known_function") == 0);
  CHECK(frames[0].line == capture_call_line);
  // The outer frames (Catch2, main, libc's start, _start) are the same code in both processes.
  const auto is_main = [](const Frame& frame) { return frame.function == "main"; };
  const auto main_there = std::find_if(frames.begin(), frames.end(), is_main);
  const auto main_here = std::find_if(local.begin(), local.end(), is_main);
  REQUIRE(main_there != frames.end());
  REQUIRE(main_here != local.end());
  CHECK(std::vector<Frame>(main_there, frames.end()) == std::vector<Frame>(main_here, local.end()));
}

// Not a test: prints how long the Symbolizer takes, in a process of its own.
TEST_CASE("timing of warm_up and of a later report", "[.][symbolizer_timing]") {
  const auto since = [](auto start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  Symbolizer symbolizer;
  auto start = std::chrono::steady_clock::now();
  symbolizer.warm_up();
  const double warm_up = since(start);
  const RawStack stack = capture_in_known_function();
  start = std::chrono::steady_clock::now();
  const std::vector<FrameAddress> located = locate(stack);
  const double locating = since(start);
  start = std::chrono::steady_clock::now();
  const std::vector<Frame> frames = symbolizer.symbolize_every_frame(located);
  const double first = since(start);
  start = std::chrono::steady_clock::now();
  symbolizer.symbolize_every_frame(located);
  const double cached = since(start);
  std::cout << "warm_up " << warm_up << " ms; locate of " << located.size() << " frames " << locating
            << " ms; symbolize of them " << first << " ms (" << frames.size() << " frames), again " << cached
            << " ms\n";
}
