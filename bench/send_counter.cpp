// LD_PRELOAD shim for the exchange rows of bench/run: counts what the
// threads other than the main one (the checker's monitor) send over the
// monitors' TCP tree, and prints at exit
//   SENDS <rank> sends <n> bytes <n> summary_frames <n> socket_cpu_ns <n>
// - sends: send() calls; bytes: what they sent;
// - summary_frames: calls handed one whole frame of a round's Summary
//   (116 bytes, the first 4 the big-endian length 112). A gather's or a
//   broadcast's frame of 112 bytes would count too; the ranks of the
//   exchange rows idle, so their monitors make none;
// - socket_cpu_ns: the thread's CPU time inside send() and recv() (time
//   blocked in recv() is no CPU time).
// The channel writes only with send() and reads only with recv()
// (src/monitor/channel.cpp), so nothing else is interposed. The main
// thread's calls (the tree's set-up in MPI_Init) are not counted.
#include <dlfcn.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#define BENCH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// src/monitor/rounds.hpp: Summary is 14 x int64; a frame adds its 4-byte length.
constexpr std::size_t kSummaryBytes = 14 * sizeof(std::int64_t);
constexpr std::size_t kSummaryFrameBytes = 4 + kSummaryBytes;

std::atomic<unsigned long long> sends{0}, sent_bytes{0}, summary_frames{0}, socket_cpu_ns{0};

bool on_other_thread() {
  static thread_local const bool other = syscall(SYS_gettid) != getpid();
  return other;
}

template <class Function>
Function next(const char* name) {
  void* symbol = dlsym(RTLD_NEXT, name);
  if (!symbol) {
    std::fprintf(stderr, "send_counter: %s not found after the shim: %s\n", name, dlerror());
    std::abort();
  }
  return reinterpret_cast<Function>(symbol);
}

unsigned long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<unsigned long long>(now.tv_sec) * 1000000000ULL + static_cast<unsigned long long>(now.tv_nsec);
}

bool is_summary_frame(const void* buffer, std::size_t length) {
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  return length == kSummaryFrameBytes && bytes[0] == 0 && bytes[1] == 0 && bytes[2] == 0 && bytes[3] == kSummaryBytes;
}

__attribute__((destructor)) void print_counts() {
  const char* rank = std::getenv("PMI_RANK");  // MPICH's
  if (rank == nullptr) rank = std::getenv("OMPI_COMM_WORLD_RANK");
  std::printf("SENDS %s sends %llu bytes %llu summary_frames %llu socket_cpu_ns %llu\n", rank ? rank : "?",
              sends.load(), sent_bytes.load(), summary_frames.load(), socket_cpu_ns.load());
  std::fflush(stdout);
}

}  // namespace

BENCH_EXPORT ssize_t send(int fd, const void* buffer, size_t length, int flags) {
  static const auto real = next<decltype(&send)>("send");
  if (!on_other_thread()) return real(fd, buffer, length, flags);
  const unsigned long long start = thread_cpu_ns();
  const ssize_t result = real(fd, buffer, length, flags);
  socket_cpu_ns.fetch_add(thread_cpu_ns() - start, std::memory_order_relaxed);
  sends.fetch_add(1, std::memory_order_relaxed);
  if (result > 0) sent_bytes.fetch_add(static_cast<unsigned long long>(result), std::memory_order_relaxed);
  // A retry after an interruption or a short write starts no new frame.
  if (result > 0 && is_summary_frame(buffer, length)) summary_frames.fetch_add(1, std::memory_order_relaxed);
  return result;
}

BENCH_EXPORT ssize_t recv(int fd, void* buffer, size_t length, int flags) {
  static const auto real = next<decltype(&recv)>("recv");
  if (!on_other_thread()) return real(fd, buffer, length, flags);
  const unsigned long long start = thread_cpu_ns();
  const ssize_t result = real(fd, buffer, length, flags);
  socket_cpu_ns.fetch_add(thread_cpu_ns() - start, std::memory_order_relaxed);
  return result;
}
