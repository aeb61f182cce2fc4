// The cost of a single MPI call, on 1 rank so that no peer and no scheduler
// adds noise: windows of 64 MPI_Irecv + 64 MPI_Isend of 8 B to itself and
// one MPI_Waitall (seconds per call, 129 calls per window), and an
// MPI_Iprobe that finds nothing (seconds per call). This is what the
// checker's wrappers add to every call of the rows above.
//
// call_cost THREADS: the same from THREADS threads at once
// (MPI_THREAD_MULTIPLE), each on tags of its own and timing itself; the
// results are the median over the threads, named call_*_threads. The
// threads start the second kind of call together.
#include <mpi.h>

#include <array>
#include <barrier>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "measure.hpp"

namespace {

constexpr int kWindow = 64;
constexpr int kMostThreads = 64;

struct CallCosts {
  double nonblocking = 0;  // seconds per call
  double iprobe = 0;
};

// Times both kinds of call on tags [first_tag, first_tag + kWindow) with
// `median_of(blocks, operation)`; `between()` runs between the two, so that
// threads time each kind while the others make the same calls.
template <class MedianOf, class Between>
CallCosts measure_calls(int first_tag, MedianOf&& median_of, Between&& between) {
  std::array<double, kWindow> sent{}, received{};
  std::array<MPI_Request, 2 * kWindow> requests{};
  const double window = median_of(bench::Blocks{.warmup = 20, .per_block = 20, .seconds = 0.4}, [&] {
    for (int i = 0; i < kWindow; ++i) {
      MPI_Irecv(&received[i], 1, MPI_DOUBLE, 0, first_tag + i, MPI_COMM_WORLD, &requests[i]);
      MPI_Isend(&sent[i], 1, MPI_DOUBLE, 0, first_tag + i, MPI_COMM_WORLD, &requests[kWindow + i]);
    }
    MPI_Waitall(2 * kWindow, requests.data(), MPI_STATUSES_IGNORE);
  });
  between();
  const double probe = median_of(bench::Blocks{.warmup = 2, .per_block = 10000, .seconds = 0.3}, [first_tag] {
    int found = 0;
    MPI_Iprobe(0, first_tag, MPI_COMM_WORLD, &found, MPI_STATUS_IGNORE);
  });
  return {window / (2 * kWindow + 1), probe};
}

void measure_one_thread() {
  const CallCosts costs = measure_calls(
      0,
      [](const bench::Blocks& blocks, auto&& operation) {
        return bench::median_seconds_per_operation(blocks, operation);
      },
      [] {});
  bench::print_result("call_nonblocking", costs.nonblocking);
  bench::print_result("call_iprobe", costs.iprobe);
}

void measure_threads(int thread_count) {
  std::vector<CallCosts> costs(thread_count);
  std::vector<std::thread> threads;
  std::barrier phases(thread_count);
  for (int t = 0; t < thread_count; ++t)
    threads.emplace_back([t, &costs, &phases] {
      costs[t] = measure_calls(
          t * kWindow,
          [](const bench::Blocks& blocks, auto&& operation) {
            return bench::median_seconds_per_operation_in_thread(blocks, operation);
          },
          [&phases] { phases.arrive_and_wait(); });
    });
  for (std::thread& thread : threads) thread.join();
  std::vector<double> nonblocking, iprobe;
  for (const CallCosts& cost : costs) {
    nonblocking.push_back(cost.nonblocking);
    iprobe.push_back(cost.iprobe);
  }
  bench::print_result("call_nonblocking_threads", bench::median(nonblocking));
  bench::print_result("call_iprobe_threads", bench::median(iprobe));
}

}  // namespace

int main(int argc, char** argv) {
  int thread_count = 0;
  if (argc > 1) {
    char* end = nullptr;
    thread_count = static_cast<int>(std::strtol(argv[1], &end, 10));
    if (*end != '\0' || thread_count < 1 || thread_count > kMostThreads) {
      std::fprintf(stderr, "call_cost: THREADS must be from 1 to %d, got '%s'\n", kMostThreads, argv[1]);
      return 2;
    }
  }
  if (thread_count == 0) {
    MPI_Init(&argc, &argv);
  } else {
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
      std::fprintf(stderr, "call_cost: %d threads need MPI_THREAD_MULTIPLE, MPI provides level %d\n", thread_count,
                   provided);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  bench::rank_checked("call_cost", 1);
  if (thread_count == 0)
    measure_one_thread();
  else
    measure_threads(thread_count);
  MPI_Finalize();
  return 0;
}
