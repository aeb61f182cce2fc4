// LD_PRELOAD shim for the exchange row of bench/run: counts what the threads
// other than the main one (the checker's monitor) send through UCX, the
// rounds they start (PMPI_Iallreduce), their PMPI_Test polls and the CPU
// time spent inside those two calls, and prints
//   SENDS <rank> rounds <n> sends <n> bytes <n> noncontiguous <n> tests <n> mpi_cpu_ns <n>
// at exit. Preloaded before libmpisentry.so, so that both libmpich's UCX
// calls and the monitor's PMPI calls come here first. Run it with
// MPIR_CVAR_NOLOCAL=1: on one node MPICH otherwise sends through its own
// shared memory, not UCX.
#include <dlfcn.h>
#include <mpi.h>
#include <sys/syscall.h>
#include <ucp/api/ucp.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#define BENCH_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::atomic<unsigned long long> rounds{0}, sends{0}, bytes{0}, noncontiguous{0}, tests{0}, mpi_cpu_ns{0};

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

void count_send(size_t count, ucp_datatype_t datatype) {
  if (!on_other_thread()) return;
  sends.fetch_add(1, std::memory_order_relaxed);
  if ((datatype & UCP_DATATYPE_CLASS_MASK) == UCP_DATATYPE_CONTIG)
    bytes.fetch_add(count * (datatype >> UCP_DATATYPE_SHIFT), std::memory_order_relaxed);
  else
    noncontiguous.fetch_add(1, std::memory_order_relaxed);
}

unsigned long long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<unsigned long long>(now.tv_sec) * 1000000000ULL + static_cast<unsigned long long>(now.tv_nsec);
}

// Calls `call` and, on a thread other than the main one, counts it in
// `calls` and its CPU time in mpi_cpu_ns.
template <class Call>
int counted(std::atomic<unsigned long long>& calls, Call&& call) {
  if (!on_other_thread()) return call();
  calls.fetch_add(1, std::memory_order_relaxed);
  const unsigned long long start = thread_cpu_ns();
  const int result = call();
  mpi_cpu_ns.fetch_add(thread_cpu_ns() - start, std::memory_order_relaxed);
  return result;
}

ucp_datatype_t datatype_of(const ucp_request_param_t* param) {
  return param && (param->op_attr_mask & UCP_OP_ATTR_FIELD_DATATYPE) ? param->datatype : ucp_dt_make_contig(1);
}

__attribute__((destructor)) void print_counts() {
  const char* rank = std::getenv("PMI_RANK");
  std::printf("SENDS %s rounds %llu sends %llu bytes %llu noncontiguous %llu tests %llu mpi_cpu_ns %llu\n",
              rank ? rank : "?", rounds.load(), sends.load(), bytes.load(), noncontiguous.load(), tests.load(),
              mpi_cpu_ns.load());
  std::fflush(stdout);
}

}  // namespace

BENCH_EXPORT ucs_status_ptr_t ucp_tag_send_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                               const ucp_request_param_t* param) {
  static const auto real = next<decltype(&ucp_tag_send_nbx)>("ucp_tag_send_nbx");
  count_send(count, datatype_of(param));
  return real(ep, buffer, count, tag, param);
}

BENCH_EXPORT ucs_status_ptr_t ucp_tag_send_sync_nbx(ucp_ep_h ep, const void* buffer, size_t count, ucp_tag_t tag,
                                                    const ucp_request_param_t* param) {
  static const auto real = next<decltype(&ucp_tag_send_sync_nbx)>("ucp_tag_send_sync_nbx");
  count_send(count, datatype_of(param));
  return real(ep, buffer, count, tag, param);
}

BENCH_EXPORT ucs_status_ptr_t ucp_am_send_nb(ucp_ep_h ep, uint16_t id, const void* buffer, size_t count,
                                             ucp_datatype_t datatype, ucp_send_callback_t callback, unsigned flags) {
  static const auto real = next<decltype(&ucp_am_send_nb)>("ucp_am_send_nb");
  count_send(count, datatype);
  return real(ep, id, buffer, count, datatype, callback, flags);
}

BENCH_EXPORT int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Request* request) {
  static const auto real = next<decltype(&PMPI_Iallreduce)>("PMPI_Iallreduce");
  return counted(rounds, [&] { return real(sendbuf, recvbuf, count, datatype, op, comm, request); });
}

BENCH_EXPORT int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  static const auto real = next<decltype(&PMPI_Test)>("PMPI_Test");
  return counted(tests, [&] { return real(request, flag, status); });
}
