// Threads outside MPI that sleep in waits only their own process can end:
// reading /proc's system-call lines and maps, the decision over a rank's
// threads outside MPI, and how the rank's state follows from it.
#include <catch2/catch.hpp>

#include <linux/futex.h>
#include <sys/syscall.h>

#include "monitor/in_process.hpp"
#include "monitor/rounds.hpp"

using namespace mpisentry;
using namespace mpisentry::monitor;
using namespace mpisentry::monitor::in_process;
using mpisentry::stacks::parse_syscall;
using namespace std::chrono_literals;

namespace {

ThreadState::Sample thread(int id, bool in_recv, std::uint64_t entered) {
  ThreadState::Sample sample;
  sample.call.function = FunctionId::Recv;
  sample.call.shape = CallShape::Receive;
  sample.in_call = in_recv;
  sample.entered = entered;
  sample.id = id;
  return sample;
}

const Clock::time_point t0{};

}  // namespace

TEST_CASE("in_process: a system-call line as /proc/self/task/TID/syscall gives it", "[unit][threads]") {
  // glibc's pthread_join: FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, no timeout, not private.
  const auto join = parse_syscall("202 0x7fa24b6b4990 0x109 0x19b9 0x0 0x0 0xffffffff 0x7ffff39d8f10 0x7fa24cca3f16\n");
  REQUIRE(join);
  CHECK(join->number == SYS_futex);
  CHECK(join->args[0] == 0x7fa24b6b4990);
  CHECK(join->sp == 0x7ffff39d8f10);
  const auto wait = futex_wait(*join);
  REQUIRE(wait);
  CHECK_FALSE(wait->timed);
  CHECK_FALSE(wait->private_flag);
  CHECK(wait->address == 0x7fa24b6b4990);
  // pthread_cond_wait: private.
  const auto cond = futex_wait(*parse_syscall("202 0x55f67d5f1148 0x189 0x0 0x0 0x0 0xffffffff 0x7f 0x7f"));
  REQUIRE(cond);
  CHECK(cond->private_flag);
  // pthread_cond_timedwait: a timeout.
  const auto timed = futex_wait(*parse_syscall("202 0x55f67d5f1148 0x189 0x0 0x7ffc10 0x0 0xffffffff 0x7f 0x7f"));
  REQUIRE(timed);
  CHECK(timed->timed);
  // A wake, a requeue, an epoll wait: not a futex wait.
  CHECK_FALSE(futex_wait(*parse_syscall("202 0x1000 0x81 0x1 0x0 0x0 0x0 0x7f 0x7f")));
  CHECK_FALSE(futex_wait(*parse_syscall("232 0x7 0x7fa24c746cd0 0x10 0xffffffff 0x0 0x7fa24c746d20 0x7f 0x7f")));
  // Running, blocked outside a call, and garbage.
  CHECK_FALSE(parse_syscall("running\n"));
  const auto stopped = parse_syscall("-1 0x7ffc 0x7f00");
  REQUIRE(stopped);
  CHECK(stopped->number == -1);
  CHECK_FALSE(parse_syscall("202 0x1 0x2"));
  CHECK_FALSE(parse_syscall("202 0x1 0x2 0x3 0x4 0x5 0x6 0x7 zz"));
  CHECK_FALSE(parse_syscall(""));
}

TEST_CASE("in_process: only this process can wake a private futex, or one in a writable private mapping",
          "[unit][threads]") {
  const std::vector<Mapping> maps = parse_maps(
      "55f6b3200000-55f6b3300000 rw-p 00000000 00:00 0                          [heap]\n"
      "7fa24a6b5000-7fa24b6b5000 rw-p 00000000 00:00 0 \n"
      "7fa24c000000-7fa24c100000 rw-s 00000000 00:05 1234                       /dev/shm/x\n"
      "7fa24d000000-7fa24d100000 r--p 00000000 08:01 99                         /usr/lib/libc.so.6\n"
      "malformed line\n");
  REQUIRE(maps.size() == 4);
  CHECK(only_this_process_wakes({0x7fa24b6b4990, false, false}, maps));   // a thread's stack
  CHECK(only_this_process_wakes({0x55f6b3200010, false, false}, maps));   // the heap
  CHECK_FALSE(only_this_process_wakes({0x7fa24c000010, false, false}, maps));  // shared memory
  CHECK_FALSE(only_this_process_wakes({0x7fa24d000010, false, false}, maps));  // read-only file pages
  CHECK_FALSE(only_this_process_wakes({0x10, false, false}, maps));            // unmapped
  CHECK(only_this_process_wakes({0x7fa24c000010, false, true}, maps));  // the private flag says it all
  CHECK_FALSE(only_this_process_wakes({0x7fa24b6b4ffe, false, false}, {{0x7fa24a6b5000, 0x7fa24b6b5000, true, true}}));
}

TEST_CASE("in_process: a rank is held only when every thread outside MPI sleeps in a wait only it can end",
          "[unit][threads]") {
  const Conditions clear{true, true};
  CHECK(decide({TaskWait::InProcess}, clear) == Holding::Held);
  CHECK(decide({TaskWait::InProcess, TaskWait::InProcess}, clear) == Holding::Held);
  CHECK(decide({TaskWait::InProcess, TaskWait::Asleep}, clear) == Holding::Idle);  // a timed wait, a shared futex
  CHECK(decide({TaskWait::InProcess, TaskWait::Runs}, clear) == Holding::Runs);
  CHECK(decide({TaskWait::Asleep, TaskWait::Runs}, clear) == Holding::Runs);
  CHECK(decide({TaskWait::InProcess}, {false, true}) == Holding::Idle);  // a program's signal handler
  CHECK(decide({TaskWait::InProcess}, {true, false}) == Holding::Idle);  // io_uring
  // No task outside MPI: the threads blocked in it decide, whatever the conditions.
  CHECK(decide({}, clear) == Holding::Held);
  CHECK(decide({}, {false, false}) == Holding::Held);
}

TEST_CASE("in_process: threads held outside MPI make the rank blocked, timed from when they were seen so",
          "[unit][threads]") {
  Observer observer;
  const std::vector<ThreadState::Sample> threads = {thread(0, false, 1), thread(1, true, 1), thread(2, true, 1)};
  // Not read, or running: the rank runs, as before.
  CHECK_FALSE(observer.observe(threads, t0).blocked);
  CHECK_FALSE(observer.observe(threads, t0 + 1s, false, {OutsideMpi::Kind::None, 0}).blocked);
  // Held: blocked, for as long as the same waits are seen.
  LocalStatus status = observer.observe(threads, t0 + 5s, false, {OutsideMpi::Kind::Held, 42});
  CHECK(status.blocked);
  CHECK(status.held_outside);
  CHECK(status.blocked_seconds == Approx(0));
  status = observer.observe(threads, t0 + 8s, false, {OutsideMpi::Kind::Held, 42});
  CHECK(status.blocked_seconds == Approx(3));
  // A thread outside MPI ran (another digest): timed again.
  status = observer.observe(threads, t0 + 9s, false, {OutsideMpi::Kind::Held, 43});
  CHECK(status.blocked_seconds == Approx(0));
  // Idle: never blocked, but stalled like a rank that polls.
  status = observer.observe(threads, t0 + 20s, false, {OutsideMpi::Kind::Idle, 43});
  CHECK_FALSE(status.blocked);
  CHECK(status.polling);
  CHECK(status.idle_outside);
  CHECK(status.stalled_seconds > 0);
  // Untracked threads or a thread polling in MPI: never held.
  CHECK_FALSE(observer.observe(threads, t0 + 21s, true, {OutsideMpi::Kind::Held, 44}).blocked);
  ThreadState::Sample polling = thread(0, true, 2);
  polling.call.function = FunctionId::Test;
  CHECK_FALSE(observer.observe({polling, thread(1, true, 1)}, t0 + 22s, false, {OutsideMpi::Kind::Held, 44}).blocked);
}

TEST_CASE("in_process: a thread that sleeps in a loop, seen awake now and then, keeps its rank stalled",
          "[unit][threads]") {
  Observer observer;
  const std::vector<ThreadState::Sample> threads = {thread(0, false, 1), thread(1, true, 1)};
  observer.observe(threads, t0);
  observer.observe(threads, t0 + 2s, false, {OutsideMpi::Kind::Idle, 1});
  // Seen awake once: still stalled since t0 + 2s.
  LocalStatus status = observer.observe(threads, t0 + 2500ms, false, {});
  CHECK(status.polling);
  status = observer.observe(threads, t0 + 3s, false, {OutsideMpi::Kind::Idle, 1});
  CHECK(status.stalled_seconds == Approx(3));  // since the last call, at t0
  // Awake for longer than Observer::kComputingAfter: it computes.
  observer.observe(threads, t0 + 3500ms, false, {});
  status = observer.observe(threads, t0 + 4500ms, false, {});
  CHECK_FALSE(status.polling);
  CHECK(status.stalled_seconds == Approx(0));
}
