// The per-thread records across threads, as in a run: the program's threads
// enter and leave calls while the monitor's thread samples them and feeds
// the samples to its Observer. Under ThreadSanitizer (scripts/sanitize
// thread) this is where the seqlocks meet a second thread.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "fake_handles.hpp"
#include "monitor/rounds.hpp"
#include "records/call_record.hpp"
#include "records/thread_state.hpp"

using namespace mpisentry;

namespace {

constexpr int kWriters = 3;
// The writers go on until the reader has this many reads: a writer alone
// would be done before the reader's first look.
constexpr std::uint64_t kReads = 20000;

// A call whose every field says which call it is, so that a torn read shows.
// Every fourth call waits on requests, which also fills the union.
CallRecord numbered_call(std::uint64_t number) {
  CallRecord record;
  record.function = number % 4 ? FunctionId::Recv : FunctionId::Waitall;
  record.shape = number % 4 ? CallShape::Collective : CallShape::Requests;
  record.peer = static_cast<int>(number);
  record.tag = static_cast<int>(number);
  record.count = static_cast<std::int64_t>(number);
  record.comm_id = number;
  record.sequence = number;
  record.request_count = static_cast<int>(number % kCopiedRequests) + 1;
  if (record.shape == CallShape::Requests)
    for (int i = 0; i < record.request_count; ++i) record.requests[i] = test::fake_handle<MPI_Request>(number);
  return record;
}

// Whether the call is one numbered_call made, whole.
bool is_whole(const CallRecord& call) {
  const auto number = static_cast<std::uint64_t>(call.count);
  if (call.peer != static_cast<int>(number) || call.tag != call.peer || call.comm_id != number ||
      call.sequence != number)
    return false;
  if (call.shape != CallShape::Requests) return true;
  for (int i = 0; i < call.request_count; ++i)
    if (call.requests[i] != test::fake_handle<MPI_Request>(number)) return false;
  return true;
}

}  // namespace

TEST_CASE("records: the monitor's samples of threads inside calls are never torn", "[records]") {
  std::atomic<bool> stop{false};
  // Writers that made their first call: until then a writer's state holds
  // the last call of the thread it served before, another test's.
  std::atomic<int> started{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w)
    writers.emplace_back([&stop, &started] {
      // A state that served an earlier thread goes on counting from its
      // calls: each call is numbered as the count it makes.
      ThreadState::Sample before;
      while (!this_thread_state().sample(before)) {
      }
      for (std::uint64_t number = before.entered; !stop.load(); ++number) {
        CallRecord record = numbered_call(number);
        ThreadState& self = enter_call(record, record.function);
        if (number % 3 == 0) this_thread_state().count_start();
        self.leave(number % 2 == 0);
        if (number == before.entered) started.fetch_add(1);
      }
    });
  while (started.load() < kWriters) std::this_thread::yield();

  std::uint64_t samples_taken = 0;
  std::uint64_t torn = 0;
  std::uint64_t behind = 0;  // a call older than the one the thread had entered
  monitor::Observer observer;
  // This thread's own state holds the calls of other tests, not a writer's.
  const ThreadState* reader = &this_thread_state();
  while (samples_taken < kReads) {
    std::vector<ThreadState::Sample> samples;
    for_each_thread([&](const ThreadState& state) {
      if (&state == reader) return;
      ThreadState::Sample sample;
      if (!state.sample(sample)) return;
      ++samples_taken;
      if (!is_whole(sample.call)) ++torn;
      // enter() stores the call, then counts it: the call is the one counted
      // last or the next.
      const auto number = static_cast<std::uint64_t>(sample.call.count);
      if (sample.entered > 0 && number + 1 != sample.entered && number != sample.entered) ++behind;
      samples.push_back(sample);
    });
    observer.observe(samples, monitor::Clock::now());
  }
  stop.store(true);
  for (std::thread& writer : writers) writer.join();

  INFO(samples_taken << " samples");
  CHECK(torn == 0);
  CHECK(behind == 0);
}

TEST_CASE("records: a shared record read while it is rewritten is whole or refused", "[records]") {
  SharedRecord shared;
  shared.store(numbered_call(0));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (std::uint64_t number = 1; !stop.load(); ++number) shared.store(numbered_call(number));
  });
  std::uint64_t loaded = 0;
  std::uint64_t torn = 0;
  while (loaded < kReads) {
    CallRecord call;
    if (!shared.load(call)) continue;
    ++loaded;
    if (!is_whole(call)) ++torn;
  }
  stop.store(true);
  writer.join();
  INFO(loaded << " reads");
  CHECK(torn == 0);
}

TEST_CASE("records: a shared record gives back every field its shape uses, and only those are stored",
          "[records]") {
  CallRecord base;
  base.function = FunctionId::Sendrecv;
  base.converted_send = true;
  base.tests_requests = true;
  base.halves = Halves::SendPending;
  base.peer = 3;
  base.tag = 4;
  base.comm = test::fake_handle<MPI_Comm>(5);
  base.datatype = test::fake_handle<MPI_Datatype>(6);
  base.count = 7;
  base.buffer = &base;
  base.comm_id = 8;
  base.source = 9;
  base.recv_tag = 10;
  base.request_count = 20;  // more than are copied
  base.op = test::fake_handle<MPI_Op>(11);
  base.sequence = 12;
  const auto common_equal = [](const CallRecord& a, const CallRecord& b) {
    return a.function == b.function && a.shape == b.shape && a.converted_send == b.converted_send &&
           a.tests_requests == b.tests_requests && a.halves == b.halves && a.peer == b.peer && a.tag == b.tag &&
           a.comm == b.comm && a.datatype == b.datatype && a.count == b.count && a.buffer == b.buffer &&
           a.comm_id == b.comm_id;
  };
  const auto round_trip = [](const CallRecord& stored) {
    SharedRecord shared;
    shared.store(stored);
    CallRecord loaded;
    REQUIRE(shared.load(loaded));
    CallRecord copied;
    copy_used(copied, stored);
    return std::pair{loaded, copied};
  };

  SECTION("a send stores the common fields only") {
    CallRecord send = base;
    send.shape = CallShape::Send;
    CallRecord loaded;
    loaded.source = -5;  // a field a send does not use keeps what it held
    SharedRecord shared;
    shared.store(send);
    REQUIRE(shared.load(loaded));
    CHECK(common_equal(loaded, send));
    CHECK(loaded.source == -5);
  }
  SECTION("a send-receive also its receive half") {
    CallRecord both = base;
    both.shape = CallShape::SendReceive;
    for (const CallRecord& got : {round_trip(both).first, round_trip(both).second}) {
      CHECK(common_equal(got, both));
      CHECK(got.source == 9);
      CHECK(got.recv_tag == 10);
    }
  }
  SECTION("a wait its requests, as many as are copied") {
    CallRecord wait = base;
    wait.shape = CallShape::Requests;
    for (int i = 0; i < kCopiedRequests; ++i) wait.requests[i] = test::fake_handle<MPI_Request>(100 + i);
    for (const CallRecord& got : {round_trip(wait).first, round_trip(wait).second}) {
      CHECK(common_equal(got, wait));
      CHECK(got.request_count == 20);
      CHECK(got.op == wait.op);
      CHECK(got.sequence == 12);
      for (int i = 0; i < kCopiedRequests; ++i) CHECK(got.requests[i] == wait.requests[i]);
    }
  }
  SECTION("a file access its file and offset") {
    CallRecord access = base;
    access.shape = CallShape::FileAccess;
    access.file = {test::fake_handle<MPI_File>(13), 14};
    for (const CallRecord& got : {round_trip(access).first, round_trip(access).second}) {
      CHECK(common_equal(got, access));
      CHECK(got.file.handle == access.file.handle);
      CHECK(got.file.offset == 14);
    }
  }
  SECTION("a window synchronization its window and its group") {
    CallRecord sync = base;
    sync.shape = CallShape::Window;
    sync.window.handle = test::fake_handle<MPI_Win>(15);
    sync.window.assertion = 16;
    sync.window.id = 17;
    sync.window.lock_type = 18;
    sync.window.group_size = 3;
    for (int i = 0; i < 3; ++i) sync.window.group[i] = 20 + i;
    for (const CallRecord& got : {round_trip(sync).first, round_trip(sync).second}) {
      CHECK(common_equal(got, sync));
      CHECK(got.sequence == 12);
      CHECK(got.window.handle == sync.window.handle);
      CHECK(got.window.assertion == 16);
      CHECK(got.window.id == 17);
      CHECK(got.window.lock_type == 18);
      CHECK(got.window.group_size == 3);
      for (int i = 0; i < 3; ++i) CHECK(got.window.group[i] == 20 + i);
    }
  }
}

// The request table rests on "no more than kProbes handles live near one
// home slot". Handles are numbered alike by pools of their own: MPICH's
// direct, indirect and built-in request handles share their low bits
// (0xac000001, 0xec000001, 0x6c000001, the last given to every send that
// completed at once), and an implementation with a pool per thread or per
// channel numbers each pool from 0. Every such request, active at once,
// must stay findable, with nothing lost.
TEST_CASE("records: request handles that pools number alike are all kept, none lost", "[records]") {
  const auto table = std::make_unique<RequestTable>();  // 8192 slots of records: too large for the stack
  table->set_concurrent_writers(false);
  CallRecord irecv;
  irecv.function = FunctionId::Irecv;
  irecv.shape = CallShape::Receive;
  irecv.peer = 1;
  std::vector<std::uint32_t> handles;
  SECTION("MPICH's: 8 direct, then indirect, and the built-in handle of sends done at once") {
    for (std::uint32_t i = 0; i < 8; ++i) handles.push_back(0xac000000u + i);
    for (std::uint32_t i = 0; i < 1000; ++i) handles.push_back(0xec000000u + i);
    handles.push_back(0x6c000001u);
  }
  SECTION("8 pools, each numbering its handles from 0 in the low bits") {
    for (std::uint32_t pool = 0; pool < 8; ++pool)
      for (std::uint32_t i = 0; i < 250; ++i) handles.push_back(0xec000000u | pool << 20 | i);
  }
  for (const std::uint32_t number : handles) table->remember(test::fake_handle<MPI_Request>(number), irecv, nullptr);
  CHECK_FALSE(table->lost_active());
  int found = 0;
  CallRecord started;
  for (const std::uint32_t number : handles) found += table->find(test::fake_handle<MPI_Request>(number), started);
  CHECK(found == static_cast<int>(handles.size()));
}
