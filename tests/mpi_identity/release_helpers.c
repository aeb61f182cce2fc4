/* A program's own helper library, built under names that look like MPI's
 * libraries (libmpihelpers.so, libucs_helpers.so, libmpich_extra.so) and
 * linked with MPI as such a library would be: a signal handler that releases
 * a thread waiting on a semaphore, and a receive whose frame is the
 * program's. Nothing here is MPI's, whatever the file is called. */
#include <mpi.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>

#define EXPORTED __attribute__((visibility("default")))

static sem_t* released;

static void release(int signal_number) {
  (void)signal_number;
  sem_post(released); /* async-signal-safe */
}

static void release_with_info(int signal_number, siginfo_t* info, void* context) {
  (void)info;
  (void)context;
  release(signal_number);
}

/* Installs the handler that posts `semaphore` on `signal_number`, as an
 * SA_SIGINFO handler when `with_info`. */
EXPORTED void helpers_release_on(int signal_number, sem_t* semaphore, int with_info) {
  released = semaphore;
  struct sigaction action;
  memset(&action, 0, sizeof(action));
  sigemptyset(&action.sa_mask);
  if (with_info) {
    action.sa_flags = SA_SIGINFO;
    action.sa_sigaction = release_with_info;
  } else {
    action.sa_handler = release;
  }
  sigaction(signal_number, &action, NULL);
}

EXPORTED void helpers_receive(int source, int tag, MPI_Comm comm) {
  int value = 0;
  MPI_Recv(&value, 1, MPI_INT, source, tag, comm, MPI_STATUS_IGNORE); /* mpisentry: receives */
}
