// A thread waiting on requests tests them itself and answers the monitor's
// asks (interceptors/tested_wait.hpp, ThreadState::ask): the loop with a
// fake test, the answer with a fake MPI_Request_get_status, the
// ask-and-answer protocol within a thread and across two, and how the
// monitor turns an answer into the requests' states. No MPI is called.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

#include "fake_handles.hpp"
#include "interceptors/tested_wait.hpp"
#include "monitor/describe.hpp"
#include "records/call_record.hpp"
#include "records/thread_state.hpp"

using namespace mpisentry;

namespace {

// Fake handles, far from MPICH's, each request's index added.
constexpr int kFirstHandle = 0x5e000000;
MPI_Request handle(int index) { return test::fake_handle<MPI_Request>(kFirstHandle + index); }
int index_of(MPI_Request request) { return static_cast<int>(test::number_of(request)) - kFirstHandle; }

// MPI_Request_get_status over fake requests: request i is found complete
// from its tests_before_done[i]-th test on (0: at the first; kNever: never),
// and a test of a failing one fails. Each is remembered as an MPI_Irecv's.
constexpr int kNever = 1 << 30;
struct FakeRequests {
  std::vector<int> tests_before_done;
  std::vector<int> failing;
  std::vector<int> tests;  // per request, so far

  explicit FakeRequests(std::vector<int> before_done)
      : tests_before_done(std::move(before_done)), tests(tests_before_done.size(), 0) {
    CallRecord irecv;
    irecv.function = FunctionId::Irecv;
    irecv.shape = CallShape::Receive;
    irecv.peer = 1;
    irecv.comm = MPI_COMM_WORLD;
    for (std::size_t i = 0; i < tests_before_done.size(); ++i) requests().remember(handle(static_cast<int>(i)), irecv, nullptr);
  }
  std::vector<MPI_Request> array() const {
    std::vector<MPI_Request> out;
    for (std::size_t i = 0; i < tests_before_done.size(); ++i) out.push_back(handle(static_cast<int>(i)));
    return out;
  }
  int get_status(MPI_Request request, int* done, MPI_Status* = nullptr) {
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

TEST_CASE("tested wait: one test when the call is done at once, then a test per round until it is",
          "[tested_wait]") {
  const std::vector<MPI_Request> array{handle(0)};
  ThreadState& self = enter_tested_wait(FunctionId::Wait, array);
  int tests = 0;
  const auto done_at = [&](int last) {
    return [&tests, last](int* done) {
      *done = ++tests >= last;
      return MPI_SUCCESS;
    };
  };
  const auto no_answer = [](std::uint64_t) { FAIL("no ask, no answer"); };
  CHECK(test_until_done(self, /*patient=*/false, done_at(1), no_answer) == MPI_SUCCESS);
  CHECK(tests == 1);
  tests = 0;
  CHECK(test_until_done(self, /*patient=*/true, done_at(5), no_answer) == MPI_SUCCESS);
  CHECK(tests == 5);
  self.leave(true);
}

TEST_CASE("tested wait: a failed test ends the loop with its error, as the wait's", "[tested_wait]") {
  const std::vector<MPI_Request> array{handle(0)};
  ThreadState& self = enter_tested_wait(FunctionId::Wait, array);
  int tests = 0;
  const int result = test_until_done(
      self, false,
      [&](int* done) {
        *done = 0;
        return ++tests == 3 ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
      },
      [](std::uint64_t) {});
  self.leave(true);
  CHECK(result == MPI_ERR_IN_STATUS);
  CHECK(tests == 3);
}

TEST_CASE("tested wait: an ask is answered between tests, once", "[tested_wait]") {
  const std::vector<MPI_Request> array{handle(0), handle(1)};
  ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
  const ThreadState::Sample sampled = sample_of(self);
  std::uint64_t ask = 0;
  int tests = 0, answers = 0;
  test_until_done(
      self, false,
      [&](int* done) {
        if (++tests == 2) ask = self.ask();
        *done = tests == 6;
        return MPI_SUCCESS;
      },
      [&](std::uint64_t asked) {
        CHECK(asked == ask);
        ++answers;
        self.answer(asked, 0b10);
      });
  self.leave(true);
  CHECK(answers == 1);
  CHECK(self.answer_to(ask, sampled) == std::optional<std::uint32_t>{0b10});
}

TEST_CASE("tested wait: the answer names the incomplete readable requests among the first copied ones",
          "[tested_wait]") {
  std::vector<int> before_done(kCopiedRequests + 2, kNever);
  before_done[0] = 0;  // complete: not in the answer
  before_done[2] = 0;
  FakeRequests fake(before_done);
  fake.failing = {5};  // a failed test: no wait rests on it
  std::vector<MPI_Request> array = fake.array();
  array[3] = MPI_REQUEST_NULL;  // null: not in the answer
  CallRecord generalized;
  generalized.function = FunctionId::Grequest_start;
  generalized.shape = CallShape::Opaque;
  requests().remember(handle(4), generalized, nullptr);  // never asked of MPI: it would run the program's query function
  const std::uint32_t incomplete = incomplete_requests(
      static_cast<int>(array.size()), array.data(),
      [&](MPI_Request request, int* done, MPI_Status*) { return fake.get_status(request, done); });
  // Bits 1 and 6..15: incomplete; not 0 and 2 (complete), 3 (null), 4
  // (generalized), 5 (failed), nor 16 and 17 (not copied).
  std::uint32_t expected = 0;
  for (int i = 1; i < kCopiedRequests; ++i)
    if (i != 2 && i != 3 && i != 4 && i != 5) expected |= std::uint32_t{1} << i;
  CHECK(incomplete == expected);
  CHECK(fake.tests[4] == 0);
  CHECK(fake.tests[16] == 0);
}

TEST_CASE("tested wait: the monitor's thread asks a waiting thread and reads each answer", "[tested_wait][records]") {
  // The waiting thread's requests complete when the monitor says so; the
  // monitor asks again and again meanwhile, as its looks do.
  constexpr int kRequests = 3;
  std::atomic<int> completed{0};  // requests 0..completed-1 are complete
  std::atomic<const ThreadState*> waiting{nullptr};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    FakeRequests fake(std::vector<int>(kRequests, kNever));  // remembered as readable
    const std::vector<MPI_Request> array = fake.array();
    ThreadState& self = enter_tested_wait(FunctionId::Waitall, array);
    waiting.store(&self);
    const auto get_status = [&](MPI_Request request, int* flag, MPI_Status*) {
      *flag = index_of(request) < completed.load();
      return MPI_SUCCESS;
    };
    test_until_done(
        self, /*patient=*/false,
        [&](int* all_done) {
          std::this_thread::yield();
          *all_done = completed.load() == kRequests;
          return MPI_SUCCESS;
        },
        [&](std::uint64_t ask) { self.answer(ask, incomplete_requests(kRequests, array.data(), get_status)); });
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
  requests().remember(handle(100), irecv, nullptr);
  requests().remember(handle(101), ibarrier, nullptr);
  requests().remember(handle(102), generalized, nullptr);

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
