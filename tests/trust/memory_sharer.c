/* Another process that can wake a thread of rank 0 (MPI_THREAD_MULTIPLE).
 * Rank 0's main thread waits in MPI_Recv for rank 1, which waits in
 * MPI_Recv for a message that rank 0's other thread sends once woken from a
 * futex wait; after argv[1] seconds a process other than rank 0 wakes it.
 * argv[2]:
 *   clone_vm: a process made with clone(CLONE_VM) without CLONE_THREAD,
 *     which shares rank 0's memory and wakes its private futex;
 *   vfork: the child of a thread's vfork, which shares the memory while
 *     that thread waits in vfork;
 *   shared_mapping: a child made by fork, which shares only a MAP_SHARED
 *     page with rank 0, where the thread waits on a shared futex;
 *   never: nobody wakes the thread, and the program hangs (the hang twin). */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

enum Waker { kCloneVm, kVfork, kSharedMapping, kNever };
static const char* const kWakers[] = {"clone_vm", "vfork", "shared_mapping", "never"};
enum { kToRank1 = 2, kToRank0 = 1, kStackBytes = 1 << 16 };

static double seconds;
static enum Waker waker;
static uint32_t* word;  /* 0 until woken; private memory, or a MAP_SHARED page */

static long futex(uint32_t* address, int op, uint32_t value) {
  return syscall(SYS_futex, address, op, value, NULL, NULL, 0);
}

static int private_futex(void) { return waker == kSharedMapping ? 0 : FUTEX_PRIVATE_FLAG; }

/* Raw system calls only: a vfork child must not touch the C library's state. */
static void sleep_then_wake(void) {
  const struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  syscall(SYS_nanosleep, &pause, NULL);
  __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
  futex(word, FUTEX_WAKE | private_futex(), 1);
}

static int waker_process(void* unused) {
  (void)unused;
  sleep_then_wake();
  return 0;
}

static void* waiting_thread(void* unused) {
  (void)unused;
  while (__atomic_load_n(word, __ATOMIC_SEQ_CST) == 0) futex(word, FUTEX_WAIT | private_futex(), 0);
  const int value = 17;
  MPI_Send(&value, 1, MPI_INT, 1, kToRank1, MPI_COMM_WORLD);
  return NULL;
}

static void* vforking_thread(void* unused) {
  (void)unused;
  const pid_t child = vfork();
  if (child == 0) {
    sleep_then_wake();
    _exit(0);
  }
  waitpid(child, NULL, 0);
  return NULL;
}

static pid_t start_waker(void) {
  if (waker == kCloneVm) {
    char* stack = malloc(kStackBytes);
    return clone(waker_process, stack + kStackBytes, CLONE_VM | SIGCHLD, NULL);
  }
  if (waker == kSharedMapping) {
    const pid_t child = fork();
    if (child == 0) {
      sleep_then_wake();
      _exit(0);
    }
    return child;
  }
  return 0;
}

int main(int argc, char** argv) {
  seconds = seconds_argument(argc, argv, 1, "seconds before the thread is woken");
  waker = variant_argument(argc, argv, 2, "who wakes the thread", kWakers, 4);
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(2, 2);
  int value = 0;
  if (rank == 1) {
    MPI_Recv(&value, 1, MPI_INT, 0, kToRank1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
    value += 1;
    MPI_Send(&value, 1, MPI_INT, 0, kToRank0, MPI_COMM_WORLD);
  } else {
    word = waker == kSharedMapping ? mmap(NULL, sizeof(*word), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                                   : calloc(1, sizeof(*word));
    pthread_t thread, vforking;
    pthread_create(&thread, NULL, waiting_thread, NULL);
    const pid_t child = start_waker();
    if (waker == kVfork) pthread_create(&vforking, NULL, vforking_thread, NULL);
    MPI_Recv(&value, 1, MPI_INT, 1, kToRank0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
    printf("rank 0 got %d\n", value);
    pthread_join(thread, NULL);
    if (waker == kVfork) pthread_join(vforking, NULL);
    if (child > 0) waitpid(child, NULL, 0);
  }
  MPI_Finalize();
  return 0;
}
