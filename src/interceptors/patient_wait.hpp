// Blocking point-to-point calls done as a nonblocking start and tests, for
// jobs with more ranks on a node than cores. There MPICH's blocking calls
// busy-poll while holding its lock, and the monitor threads get neither CPU
// nor lock: rounds took 40 ms at 8 ranks on 2 cores. A patient wait spins
// about 2 ms, as MPICH would, then sleeps with growing pauses, so a rank
// that really waits gives its core away. Blocking
// and nonblocking point-to-point operations match each other, so this is
// invisible to the other ranks; collectives are never converted.
#pragma once

#include <mpi.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace mpisentry {

inline constexpr auto kPatientSpin = std::chrono::milliseconds(2);
inline constexpr long kFirstPauseNs = 10'000;
inline constexpr long kLongestPauseNs = 1'000'000;

// What a patient wait does after each test that found nothing done: spins
// kPatientSpin from the first such test, then sleeps with growing pauses.
class PatientPauses {
 public:
  void after_test() {
    const auto now = std::chrono::steady_clock::now();
    if (!spin_until_) spin_until_ = now + kPatientSpin;
    if (now < *spin_until_) return;
    const timespec pause{0, pause_ns_};
    nanosleep(&pause, nullptr);
    pause_ns_ = std::min(pause_ns_ * 2, kLongestPauseNs);
  }

 private:
  std::optional<std::chrono::steady_clock::time_point> spin_until_;
  long pause_ns_ = kFirstPauseNs;
};

// Calls test(&done) until done or an error, and between() after each test
// that found nothing done. The first test comes at once.
template <typename Test, typename Between>
int test_until(Test&& test, Between&& between) {
  int done = 0;
  int result = test(&done);
  while (result == MPI_SUCCESS && !done) {
    between();
    result = test(&done);
  }
  return result;
}

// Calls test(&done) until done or an error, with patient pauses.
template <typename Test>
int until_done(Test&& test) {
  PatientPauses pauses;
  return test_until(test, [&pauses] { pauses.after_test(); });
}

// Completes a started request: tests it until done. Should a test fail
// while the request is still active, the request is cancelled and freed, so
// that it cannot take a later message.
inline int complete(MPI_Request& request, MPI_Status* status) {
  const int tested = until_done([&](int* done) { return PMPI_Test(&request, done, status); });
  if (tested != MPI_SUCCESS && request != MPI_REQUEST_NULL) {
    PMPI_Cancel(&request);
    PMPI_Request_free(&request);
  }
  return tested;
}

// start(args..., &request), then tests the request until it completes.
// MPICH 4.0 raises a failed request's error (a truncated message, say) in
// MPI_Test on MPI_COMM_WORLD's error handler, where the blocking call would
// raise it on its communicator's: receives go through receive_when_ready.
template <typename Start, typename... Args>
int start_then_wait(Start start, MPI_Status* status, Args... args) {
  MPI_Request request = MPI_REQUEST_NULL;
  const int started = start(args..., &request);
  if (started != MPI_SUCCESS) return started;
  return complete(request, status);
}

// A blocking receive made patient: probes until a matching message has
// arrived, then receive() (the blocking call itself) takes it, so that
// errors, their codes and the error handler called are the blocking call's.
template <typename Receive>
int receive_when_ready(int source, int tag, MPI_Comm comm, Receive receive) {
  const int probed =
      until_done([&](int* ready) { return PMPI_Iprobe(source, tag, comm, ready, MPI_STATUS_IGNORE); });
  return probed != MPI_SUCCESS ? probed : receive();
}

// MPI_Sendrecv as its halves, so that the monitor knows which is done:
// start_send(&request) starts the send, the receive goes as in
// receive_when_ready, received(result) tells that it is done, then the send is
// completed; with patient pauses or spinning as MPI's own call would. The
// receive's error comes first, as it is the likelier one. MPI defines the
// call as its two halves run concurrently (MPI 4.0, 3.10), and point-to-point
// calls of either form match each other, so no other rank can tell.
template <typename StartSend, typename Receive, typename Received>
int send_while_receiving(bool patient, StartSend start_send, int source, int tag, MPI_Comm comm, Receive receive,
                         Received received) {
  MPI_Request send = MPI_REQUEST_NULL;
  const int started = start_send(&send);
  if (started != MPI_SUCCESS) return started;
  PatientPauses pauses;
  const auto between = [&] {
    if (patient) pauses.after_test();
  };
  const int probed =
      test_until([&](int* ready) { return PMPI_Iprobe(source, tag, comm, ready, MPI_STATUS_IGNORE); }, between);
  const int got = probed != MPI_SUCCESS ? probed : receive();
  received(got);
  int sent = test_until([&](int* done) { return PMPI_Test(&send, done, MPI_STATUS_IGNORE); }, between);
  if (sent != MPI_SUCCESS && send != MPI_REQUEST_NULL) {
    PMPI_Cancel(&send);
    PMPI_Request_free(&send);
  }
  return got != MPI_SUCCESS ? got : sent;
}

}  // namespace mpisentry
