// A thread waiting on requests tests them itself and answers the monitor's
// asks (interceptors/tested_wait.hpp, ThreadState::ask): the loop's
// decisions with a fake MPI_Request_get_status, the ask-and-answer protocol
// within a thread and across two, and how the monitor turns an answer into
// the requests' states. No MPI is called.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "interceptors/tested_wait.hpp"
#include "monitor/describe.hpp"
#include "records/call_record.hpp"
#include "records/thread_state.hpp"

using namespace mpisentry;

namespace {

// Fake handles, far from MPICH's, each request's index added.
constexpr int kFirstHandle = 0x5e000000;
MPI_Request handle(int index) { return static_cast<MPI_Request>(kFirstHandle + index); }
int index_of(MPI_Request request) { return static_cast<int>(request) - kFirstHandle; }

// MPI_Request_get_status over fake requests: request i is found complete
// from its tests_before_done[i]-th test on (0: at the first; kNever: never),
// and a test of a failing one fails.
constexpr int kNever = 1 << 30;
struct FakeRequests {
  std::vector<int> tests_before_done;
  std::vector<int> failing;
  std::vector<int> tests;  // per request, so far

  explicit FakeRequests(std::vector<int> before_done)
      : tests_before_done(std::move(before_done)), tests(tests_before_done.size(), 0) {}
  std::vector<MPI_Request> array() const {
    std::vector<MPI_Request> out;
    for (std::size_t i = 0; i < tests_before_done.size(); ++i) out.push_back(handle(static_cast<int>(i)));
    return out;
  }
  int get_status(MPI_Request request, int* done) {
    const int i = index_of(request);
    for (int bad : failing)
      if (bad == i) return MPI_ERR_REQUEST;
    *done = tests[static_cast<std::size_t>(i)]++ >= tests_before_done[static_cast<std::size_t>(i)];
    return MPI_SUCCESS;
  }
  int total_tests() const {
    int total = 0;
    for (int n : tests) total += n;
    return total;
  }
};

// The calling thread enters a Wait on `array` whose requests it tests.
ThreadState& enter_tested_wait(FunctionId function, const std::vector<MPI_Request>& array) {
  CallRecord record;
  record.shape = CallShape::Requests;
  record.request_count = static_cast<int>(array.size());
  for (std::size_t i = 0; i < array.size() && i < static_cast<std::size_t>(kCopiedRequests); ++i)
    record.requests[i] = array[i];
  record.tests_requests = true;
  return enter_call(record, function);
}

ThreadState::Sample sample_of(const ThreadState& state) {
  ThreadState::Sample sample;
  REQUIRE(state.sample(sample));
  return sample;
}

// Runs the loop on the calling thread; `pause` after each round that found
// the call unable to return.
template <typename Pause>
void run_loop(ThreadState& self, Completion completion, FakeRequests& fake, const std::vector<MPI_Request>& array,
              Pause pause, int* answers_prepared = nullptr) {
  test_until_complete_with(
      self, completion, static_cast<int>(array.size()), array.data(),
      [&](MPI_Request request, int* done) { return fake.get_status(request, done); }, pause,
      [&] {
        if (answers_prepared) ++*answers_prepared;
      });
}

}  // namespace

TEST_CASE("tested wait: an answer counts only for its own ask, given in the call the monitor sampled",
          "[tested_wait]") {
  const std::vector<MPI_Request> array{handle(0), handle(1)};
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  const ThreadState::Sample sampled = sample_of(self);

  const std::uint64_t first = self.ask();
  CHECK(self.unanswered_ask() == first);
  CHECK_FALSE(self.answer_to(first, sampled));  // not answered yet
  self.answer(first, 0b10);
  CHECK(self.unanswered_ask() == 0);
  CHECK(self.answer_to(first, sampled) == std::optional<std::uint32_t>{0b10});

  SECTION("an answer to an earlier ask is no answer to a later one") {
    const std::uint64_t second = self.ask();
    CHECK(second == first + 1);
    CHECK_FALSE(self.answer_to(second, sampled));
    self.answer(second, 0b01);
    CHECK(self.answer_to(second, sampled) == std::optional<std::uint32_t>{0b01});
    CHECK_FALSE(self.answer_to(first, sampled));
    self.leave(true);
  }
  SECTION("an answer given in a later call is not about the sampled one") {
    self.leave(true);
    enter_tested_wait(FunctionId::Waitall, array);
    const std::uint64_t second = self.ask();
    self.answer(second, 0b11);
    CHECK_FALSE(self.answer_to(second, sampled));
    CHECK(self.answer_to(second, sample_of(self)) == std::optional<std::uint32_t>{0b11});
    self.leave(true);
  }
  SECTION("a sample taken outside a call gets no answer") {
    self.leave(true);
    const ThreadState::Sample outside = sample_of(self);
    const std::uint64_t second = self.ask();
    self.answer(second, 0b11);
    CHECK_FALSE(self.answer_to(second, outside));
  }
}

TEST_CASE("tested wait, all: tests the first request not yet seen complete, returns once all are", "[tested_wait]") {
  FakeRequests fake({0, 3, 1});
  std::vector<MPI_Request> array = fake.array();
  array.insert(array.begin() + 1, MPI_REQUEST_NULL);
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  int pauses = 0;
  run_loop(self, Completion::All, fake, array, [&] { ++pauses; });
  self.leave(true);
  // Request 1 (after the null) is found incomplete three times, then
  // request 2 once, a pause after each; each is tested once more, complete.
  CHECK(pauses == 4);
  CHECK(fake.tests == std::vector<int>{1, 4, 2});
}

TEST_CASE("tested wait, all: a failed test leaves the call to MPI at once", "[tested_wait]") {
  FakeRequests fake({0, kNever, kNever});
  fake.failing = {1};
  const std::vector<MPI_Request> array = fake.array();
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  run_loop(self, Completion::All, fake, array, [] { FAIL("no pause after a failed test"); });
  self.leave(true);
  CHECK(fake.tests == std::vector<int>{1, 0, 0});
}

TEST_CASE("tested wait: an ask is answered with the requests incomplete after it, among the first copied ones",
          "[tested_wait]") {
  std::vector<int> before_done(kCopiedRequests + 2, kNever);
  before_done[0] = 0;  // complete: not in the answer
  before_done[2] = 0;
  FakeRequests fake(before_done);
  std::vector<MPI_Request> array = fake.array();
  array[3] = MPI_REQUEST_NULL;  // null: not in the answer
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  const ThreadState::Sample sampled = sample_of(self);
  std::uint64_t ask = 0;
  int answers_prepared = 0;
  int pauses = 0;
  // The monitor asks after the second round; the loop ends by a failed
  // test once the answer is given (a request that never completes
  // otherwise keeps it going).
  run_loop(
      self, Completion::All, fake, array,
      [&] {
        ++pauses;
        if (pauses == 2) ask = self.ask();
        if (pauses == 3) {
          REQUIRE(self.answer_to(ask, sampled));
          fake.failing = {1};
        }
      },
      &answers_prepared);
  self.leave(true);
  CHECK(answers_prepared == 1);  // the collective checks' comparison ran before the answer
  // Bits 1 and 4..15: incomplete at the answer; not 0 and 2 (complete), 3
  // (null), nor 16 and 17 (not copied).
  std::uint32_t expected = 0;
  for (int i = 1; i < kCopiedRequests; ++i)
    if (i != 2 && i != 3) expected |= std::uint32_t{1} << i;
  CHECK(self.answer_to(ask, sampled) == std::optional<std::uint32_t>{expected});
}

TEST_CASE("tested wait, all: requests found complete before an ask stay out of its answer", "[tested_wait]") {
  FakeRequests fake({0, 2, kNever});
  const std::vector<MPI_Request> array = fake.array();
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  const ThreadState::Sample sampled = sample_of(self);
  std::uint64_t ask = 0;
  int pauses = 0;
  run_loop(self, Completion::All, fake, array, [&] {
    if (++pauses == 3) ask = self.ask();  // request 1 was seen complete in the third round
    if (pauses == 4) fake.failing = {2};
  });
  self.leave(true);
  CHECK(self.answer_to(ask, sampled) == std::optional<std::uint32_t>{0b100});
  // Requests 0 and 1 were not tested again for the answer.
  CHECK(fake.tests[0] == 1);
  CHECK(fake.tests[1] == 3);
}

TEST_CASE("tested wait, any: a request complete at the first look leaves the call to MPI", "[tested_wait]") {
  // It may be an inactive persistent request, which MPI_Waitany skips.
  FakeRequests fake({kNever, 0, kNever});
  const std::vector<MPI_Request> array = fake.array();
  ThreadState& self = enter_tested_wait(FunctionId::Waitany, array);
  run_loop(self, Completion::Any, fake, array, [] { FAIL("no pause when a request is done at the first look"); });
  self.leave(true);
  CHECK(fake.tests == std::vector<int>{1, 1, 0});
}

TEST_CASE("tested wait, any: returns once a request seen incomplete has completed", "[tested_wait]") {
  FakeRequests fake({kNever, kNever, 4});
  std::vector<MPI_Request> array = fake.array();
  array.push_back(MPI_REQUEST_NULL);
  ThreadState& self = enter_tested_wait(FunctionId::Waitsome, array);
  const ThreadState::Sample sampled = sample_of(self);
  std::uint64_t ask = 0;
  int pauses = 0;
  run_loop(self, Completion::Any, fake, array, [&] {
    if (++pauses == 1) ask = self.ask();
  });
  self.leave(true);
  // The first look, then rounds until request 2's fifth test, with one
  // more test of each request for the answer.
  CHECK(fake.tests == std::vector<int>{5, 5, 5});
  CHECK(self.answer_to(ask, sampled) == std::optional<std::uint32_t>{0b111});
}

TEST_CASE("tested wait, any: with no active request the call is left to MPI at once", "[tested_wait]") {
  FakeRequests fake({});
  const std::vector<MPI_Request> array{MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  ThreadState& self = enter_tested_wait(FunctionId::Waitany, array);
  run_loop(self, Completion::Any, fake, array, [] { FAIL("no pause without an active request"); });
  self.leave(true);
}

TEST_CASE("tested wait: the monitor's thread asks a waiting thread and reads each answer", "[tested_wait][records]") {
  // The waiting thread's requests complete when the monitor says so; the
  // monitor asks again and again meanwhile, as its looks do.
  constexpr int kRequests = 3;
  std::atomic<int> completed{0};  // requests 0..completed-1 are complete
  std::atomic<const ThreadState*> waiting{nullptr};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    std::vector<MPI_Request> array;
    for (int i = 0; i < kRequests; ++i) array.push_back(handle(i));
    ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
    waiting.store(&self);
    test_until_complete_with(
        self, Completion::All, kRequests, array.data(),
        [&](MPI_Request request, int* flag) {
          *flag = index_of(request) < completed.load();
          return MPI_SUCCESS;
        },
        [] { std::this_thread::yield(); }, [] {});
    self.leave(true);
    done.store(true);
  });
  while (!waiting.load()) std::this_thread::yield();
  const ThreadState& state = *waiting.load();
  ThreadState::Sample sampled;
  while (!state.sample(sampled) || !sampled.in_call) std::this_thread::yield();

  std::vector<std::uint32_t> answers;
  for (int now_complete = 0; now_complete < kRequests; ++now_complete) {
    completed.store(now_complete);
    for (int look = 0; look < 100; ++look) {
      const std::uint64_t ask = state.ask();
      std::optional<std::uint32_t> answer;
      while (!(answer = state.answer_to(ask, sampled))) std::this_thread::yield();
      // Requests complete before the ask are never reported incomplete.
      const std::uint32_t all = (1u << kRequests) - 1;
      const std::uint32_t incomplete_at_most = all & ~((1u << now_complete) - 1);
      CHECK((*answer & ~incomplete_at_most) == 0);
      answers.push_back(*answer);
    }
  }
  completed.store(kRequests);
  waiter.join();
  CHECK(done.load());
  // Once the requests completed, a later ask gets no answer about the call.
  CHECK_FALSE(state.answer_to(state.ask(), sampled));
  CHECK(answers.front() == 0b111);
  CHECK(answers.back() == 0b100);
}

TEST_CASE("tested wait: the monitor takes a request's state from an answer only when the request is readable",
          "[tested_wait][describe]") {
  CallRecord irecv;
  irecv.function = FunctionId::Irecv;
  irecv.shape = CallShape::Receive;
  irecv.peer = 1;
  irecv.comm = MPI_COMM_WORLD;
  CallRecord ibarrier;
  ibarrier.function = FunctionId::Ibarrier;
  ibarrier.shape = CallShape::Collective;
  ibarrier.comm = MPI_COMM_WORLD;
  CallRecord generalized;
  generalized.function = FunctionId::Grequest_start;
  generalized.shape = CallShape::Opaque;
  requests().remember(handle(100), irecv);
  requests().remember(handle(101), ibarrier);
  requests().remember(handle(102), generalized);

  CHECK(requests().all_readable(2, std::vector<MPI_Request>{handle(100), handle(101)}.data()));
  CHECK(requests().all_readable(2, std::vector<MPI_Request>{MPI_REQUEST_NULL, handle(100)}.data()));
  CHECK_FALSE(requests().all_readable(2, std::vector<MPI_Request>{handle(100), handle(102)}.data()));
  CHECK_FALSE(requests().all_readable(1, std::vector<MPI_Request>{handle(103)}.data()));  // never started

  CallRecord wait;
  wait.function = FunctionId::Waitall;
  wait.shape = CallShape::Requests;
  wait.request_count = 5;
  const MPI_Request array[] = {handle(100), handle(101), handle(102), handle(103), MPI_REQUEST_NULL};
  std::copy(std::begin(array), std::end(array), wait.requests);
  const auto states = [](const std::vector<RequestView>& views) {
    std::vector<RequestState> out;
    for (const RequestView& view : views) out.push_back(view.state);
    return out;
  };
  using enum RequestState;
  CHECK(states(monitor::view_requests(wait, std::nullopt)) ==
        std::vector<RequestState>{Unknown, Unknown, Unknown, Unknown, Unknown});
  CHECK(states(monitor::view_requests(wait, 0b01111)) ==
        std::vector<RequestState>{Incomplete, Incomplete, Unknown, Unknown, Unknown});
  CHECK(states(monitor::view_requests(wait, 0b00010)) ==
        std::vector<RequestState>{Complete, Incomplete, Unknown, Unknown, Unknown});
}
