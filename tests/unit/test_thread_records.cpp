// The per-thread records across threads, as in a run: the program's threads
// enter and leave calls while the monitor's thread samples them and feeds
// the samples to its Observer. Under ThreadSanitizer (scripts/sanitize
// thread) this is where the seqlocks meet a second thread.
#include <catch2/catch.hpp>

#include <atomic>
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
