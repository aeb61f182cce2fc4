// A rank whose main thread makes no MPI call between MPI_Init and
// MPI_Finalize (so that every message sent meanwhile is the checker's): it
// sleeps for <seconds>, then prints the CPU time every other thread of the
// process used during the sleep, one line per thread:
//   THREAD <rank> <tid> <cpu ns> <times scheduled> <seconds slept>
// read from /proc/self/task/<tid>/schedstat (nanosecond resolution, unlike
// the clock ticks of .../stat). The main thread is left out: it slept.
#include <mpi.h>

#include "measure.hpp"
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>

namespace {

struct ThreadUse {
  unsigned long long cpu_ns = 0;
  unsigned long long scheduled = 0;
};

// The process's threads other than the calling (main) one.
std::map<long, ThreadUse> other_threads() {
  std::map<long, ThreadUse> threads;
  DIR* tasks = opendir("/proc/self/task");
  if (!tasks) return threads;
  const long main_thread = getpid();
  while (const dirent* entry = readdir(tasks)) {
    const long tid = std::strtol(entry->d_name, nullptr, 10);
    if (tid <= 0 || tid == main_thread) continue;
    const std::string path = "/proc/self/task/" + std::string(entry->d_name) + "/schedstat";
    if (FILE* stats = std::fopen(path.c_str(), "r")) {
      ThreadUse use;
      unsigned long long waited = 0;
      if (std::fscanf(stats, "%llu %llu %llu", &use.cpu_ns, &waited, &use.scheduled) == 3) threads[tid] = use;
      std::fclose(stats);
    }
  }
  closedir(tasks);
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char* end = nullptr;
  const double seconds = argc == 2 ? std::strtod(argv[1], &end) : -1;
  if (argc != 2 || *end != '\0' || !(seconds > 0)) {
    if (rank == 0) std::fprintf(stderr, "usage: idle <seconds to sleep, > 0>; got '%s'\n", argc > 1 ? argv[1] : "");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }

  const std::map<long, ThreadUse> before = other_threads();
  const double start = MPI_Wtime();
  bench::sleep_whole(seconds);
  const double slept = MPI_Wtime() - start;
  for (const auto& [tid, after] : other_threads()) {
    const auto earlier = before.find(tid);
    const ThreadUse base = earlier == before.end() ? ThreadUse{} : earlier->second;
    std::printf("THREAD %d %ld %llu %llu %.6f\n", rank, tid, after.cpu_ns - base.cpu_ns,
                after.scheduled - base.scheduled, slept);
  }
  std::fflush(stdout);
  MPI_Finalize();
  return 0;
}
