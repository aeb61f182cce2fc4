/* Rank 0 waits outside MPI in the blocking system calls of one class, with a
 * timeout where the call takes one, while the checker takes its stack; it
 * prints each call's result and errno, and ends with status 3 when one is
 * not what the call gives undisturbed (EINTR, say), as a program would.
 *
 *   waits_outside CLASS SHAPE ENDING
 *
 * CLASS: sockets (recv and recvfrom with and without SO_RCVTIMEO, accept),
 * polls (poll, ppoll, select, epoll_wait, epoll_pwait2), sleeps (nanosleep,
 * clock_nanosleep), process (sem_timedwait, pthread_cond_timedwait,
 * sigwaitinfo), pipes (read of a pipe, waitpid).
 * SHAPE: "threads": each call on a thread of its own (which made an MPI call
 * first, so that the checker knows it), all at once; "main": the thread that
 * initialized MPI makes the calls one after another.
 * ENDING: "correct": each call lasts its time (its timeout, or a helper
 * thread that never calls MPI ends it: a byte, a connection, a child's exit,
 * a signal), while ranks 1 and 2 wait for rank 0 in MPI_Allreduce, then all
 * finish with status 0. "hang": ranks 1 and 2 receive from each other, a
 * real deadlock, while rank 0 repeats its calls with short timeouts (or
 * waits for an event that never comes) and, in the "threads" shape, its
 * main thread waits in MPI_Recv for rank 1: the checker's HARD report ends
 * the job; only unexpected results are printed then.
 * Every rank prints its pid on stderr ("pid RANK PID"), and rank 0 "ready"
 * once its waits begin. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "support.h"

enum { kMaxCalls = 5 };
static const double kThreadsSeconds = 4.5; /* each call, all at once: past DEADLOCK-WARNING and a dump */
static const double kMainSeconds = 1.5;    /* each call, one after another */
static const double kHangSeconds = 0.4;   /* each repeated call while the job hangs */
static const char kBytes[] = "bytes";     /* what a helper sends: 5 bytes */

static int hang = 0;

/* One wait: what it is given, what it gives. */
struct wait {
  const char* name;
  double seconds;    /* its timeout, or when the helper ends it */
  int fds[2];        /* its descriptors (a socket pair, a pipe, a listening socket...) */
  pid_t child;       /* waitpid's */
  pthread_t thread;  /* the waiting thread, for sigwaitinfo's signal */
  long result;       /* normalized: the same in every undisturbed run */
  int error;         /* errno after the call */
};

static struct timespec timespec_of(double seconds) {
  struct timespec span = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  return span;
}

static struct timespec deadline_on(clockid_t clock, double seconds) {
  struct timespec now;
  clock_gettime(clock, &now);
  const struct timespec span = timespec_of(seconds);
  now.tv_sec += span.tv_sec;
  now.tv_nsec += span.tv_nsec;
  if (now.tv_nsec >= 1000000000L) {
    now.tv_nsec -= 1000000000L;
    ++now.tv_sec;
  }
  return now;
}

static void fail(const char* what) {
  perror(what);
  exit(2);
}

/* ---- sockets ---- */

static void with_receive_timeout(int fd, double seconds) {
  const struct timeval timeout = {(time_t)seconds, (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6)};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout)) != 0) fail("setsockopt");
}

static void stream_pair(struct wait* w) {
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, w->fds) != 0) fail("socketpair");
}

/* Two sockets of `type`: fds[0] bound to a free port of the loopback, fds[1]
 * to reach it from. */
static void loopback_sockets(struct wait* w, int type) {
  const struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  w->fds[0] = socket(AF_INET, type, 0);
  w->fds[1] = socket(AF_INET, type, 0);
  if (w->fds[0] < 0 || w->fds[1] < 0 || bind(w->fds[0], (const struct sockaddr*)&address, sizeof(address)) != 0)
    fail("loopback socket");
}

static void connect_to(struct wait* w) {
  struct sockaddr_in address;
  socklen_t length = sizeof(address);
  if (getsockname(w->fds[0], (struct sockaddr*)&address, &length) != 0 ||
      connect(w->fds[1], (struct sockaddr*)&address, length) != 0)
    fail("connect");
}

/* A UDP socket on the loopback (fds[0]) and one to send to it (fds[1]). */
static void datagram_pair(struct wait* w) {
  loopback_sockets(w, SOCK_DGRAM);
  connect_to(w);
}

static void prepare_recv_timeout(struct wait* w) {
  stream_pair(w);
  with_receive_timeout(w->fds[0], w->seconds);
}

__attribute__((noinline)) static void wait_recv_timeout(struct wait* w) {
  char buffer[16];
  w->result = recv(w->fds[0], buffer, sizeof(buffer), 0); /* mpisentry: waits [recv_timeout] */
}

static void prepare_recvfrom_timeout(struct wait* w) {
  datagram_pair(w);
  with_receive_timeout(w->fds[0], w->seconds);
}

__attribute__((noinline)) static void wait_recvfrom_timeout(struct wait* w) {
  char buffer[16];
  struct sockaddr_in from;
  socklen_t length = sizeof(from);
  w->result = recvfrom(w->fds[0], buffer, sizeof(buffer), 0, (struct sockaddr*)&from, &length); /* mpisentry: waits [recvfrom_timeout] */
}

__attribute__((noinline)) static void wait_recv(struct wait* w) {
  char buffer[16];
  w->result = recv(w->fds[0], buffer, sizeof(buffer), 0); /* mpisentry: waits [recv] */
}

__attribute__((noinline)) static void wait_recvfrom(struct wait* w) {
  char buffer[16];
  w->result = recvfrom(w->fds[0], buffer, sizeof(buffer), 0, NULL, NULL); /* mpisentry: waits [recvfrom] */
}

static void send_bytes(struct wait* w) {
  if (send(w->fds[1], kBytes, strlen(kBytes), 0) != (ssize_t)strlen(kBytes)) fail("send");
}

static void prepare_accept(struct wait* w) {
  loopback_sockets(w, SOCK_STREAM);
  if (listen(w->fds[0], 1) != 0) fail("listen");
}

__attribute__((noinline)) static void wait_accept(struct wait* w) {
  const int accepted = accept(w->fds[0], NULL, NULL); /* mpisentry: waits [accept] */
  w->result = accepted >= 0;  /* a descriptor, whichever */
  if (accepted >= 0) close(accepted);
}

/* ---- polls: a pipe that stays empty ---- */

static void prepare_pipe(struct wait* w) {
  if (pipe(w->fds) != 0) fail("pipe");
}

__attribute__((noinline)) static void wait_poll(struct wait* w) {
  struct pollfd readable = {w->fds[0], POLLIN, 0};
  w->result = poll(&readable, 1, (int)(w->seconds * 1000)); /* mpisentry: waits [poll] */
}

__attribute__((noinline)) static void wait_ppoll(struct wait* w) {
  struct pollfd readable = {w->fds[0], POLLIN, 0};
  const struct timespec timeout = timespec_of(w->seconds);
  w->result = ppoll(&readable, 1, &timeout, NULL); /* mpisentry: waits [ppoll] */
}

__attribute__((noinline)) static void wait_select(struct wait* w) {
  fd_set readable;
  FD_ZERO(&readable);
  FD_SET(w->fds[0], &readable);
  struct timeval timeout = {(time_t)w->seconds, (suseconds_t)((w->seconds - (double)(time_t)w->seconds) * 1e6)};
  w->result = select(w->fds[0] + 1, &readable, NULL, NULL, &timeout); /* mpisentry: waits [select] */
}

static int epoll_on_pipe(struct wait* w) {
  const int epoll = epoll_create1(EPOLL_CLOEXEC);
  struct epoll_event event = {.events = EPOLLIN};
  if (epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, w->fds[0], &event) != 0) fail("epoll");
  return epoll;
}

__attribute__((noinline)) static void wait_epoll_wait(struct wait* w) {
  const int epoll = epoll_on_pipe(w);
  struct epoll_event event;
  w->result = epoll_wait(epoll, &event, 1, (int)(w->seconds * 1000)); /* mpisentry: waits [epoll_wait] */
  const int error = errno;
  close(epoll);
  errno = error;
}

__attribute__((noinline)) static void wait_epoll_pwait2(struct wait* w) {
  const int epoll = epoll_on_pipe(w);
  struct epoll_event event;
  const struct timespec timeout = timespec_of(w->seconds);
  w->result = epoll_pwait2(epoll, &event, 1, &timeout, NULL); /* mpisentry: waits [epoll_pwait2] */
  const int error = errno;
  close(epoll);
  errno = error;
}

/* ---- sleeps ---- */

__attribute__((noinline)) static void wait_nanosleep(struct wait* w) {
  const struct timespec span = timespec_of(w->seconds);
  w->result = nanosleep(&span, NULL); /* mpisentry: waits [nanosleep] */
}

__attribute__((noinline)) static void wait_clock_nanosleep(struct wait* w) {
  const struct timespec until = deadline_on(CLOCK_MONOTONIC, w->seconds);
  w->result = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL); /* mpisentry: waits [clock_nanosleep] */
}

/* ---- waits that only this process ends ---- */

__attribute__((noinline)) static void wait_sem_timedwait(struct wait* w) {
  sem_t never_posted;
  sem_init(&never_posted, 0, 0);
  const struct timespec until = deadline_on(CLOCK_REALTIME, w->seconds);
  w->result = sem_timedwait(&never_posted, &until); /* mpisentry: waits [sem_timedwait] */
  const int error = errno;
  sem_destroy(&never_posted);
  errno = error;
}

__attribute__((noinline)) static void wait_cond_timedwait(struct wait* w) {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;
  pthread_mutex_lock(&lock);
  const struct timespec until = deadline_on(CLOCK_REALTIME, w->seconds);
  w->result = pthread_cond_timedwait(&never_signalled, &lock, &until); /* mpisentry: waits [cond_timedwait] */
  pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void wait_sigwaitinfo(struct wait* w) {
  sigset_t usr2;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  w->thread = pthread_self();
  siginfo_t info;
  w->result = sigwaitinfo(&usr2, &info); /* mpisentry: waits [sigwaitinfo] */
}

static void send_usr2(struct wait* w) { pthread_kill(w->thread, SIGUSR2); }

/* ---- a pipe and a child ---- */

__attribute__((noinline)) static void wait_pipe_read(struct wait* w) {
  char buffer[16];
  w->result = read(w->fds[0], buffer, sizeof(buffer)); /* mpisentry: waits [pipe_read] */
}

static void write_bytes(struct wait* w) {
  if (write(w->fds[1], kBytes, strlen(kBytes)) != (ssize_t)strlen(kBytes)) fail("write");
}

/* The child sleeps as long as the call lasts (for ever while the job
 * hangs), then exits with 7; it ends with the rank whatever happens. */
static void prepare_child(struct wait* w) {
  w->child = fork();
  if (w->child < 0) fail("fork");
  if (w->child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() == 1) _exit(1);  /* the rank ended before the line above */
    if (hang) for (;;) pause();
    const struct timespec span = timespec_of(w->seconds);
    while (nanosleep(&span, NULL) != 0) continue;
    _exit(7);
  }
}

__attribute__((noinline)) static void wait_waitpid(struct wait* w) {
  int status = 0;
  const pid_t ended = waitpid(w->child, &status, 0); /* mpisentry: waits [waitpid] */
  w->result = ended == w->child && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- the classes ---- */

struct call {
  const char* name;
  void (*prepare)(struct wait*);  /* may be NULL */
  void (*wait)(struct wait*);
  void (*end)(struct wait*);      /* the helper's event after `seconds`; NULL: a timeout ends it */
  long expected;                  /* result */
  int expected_errno;
  int blocks_usr2;                /* the waiting thread blocks SIGUSR2 for the call */
};

struct class {
  const char* name;
  struct call calls[kMaxCalls];
  int count;
};

static const struct class kClasses[] = {
    {"sockets",
     {{"recv with SO_RCVTIMEO", prepare_recv_timeout, wait_recv_timeout, NULL, -1, EAGAIN, 0},
      {"recvfrom with SO_RCVTIMEO", prepare_recvfrom_timeout, wait_recvfrom_timeout, NULL, -1, EAGAIN, 0},
      {"recv", stream_pair, wait_recv, send_bytes, 5, 0, 0},
      {"recvfrom", datagram_pair, wait_recvfrom, send_bytes, 5, 0, 0},
      {"accept", prepare_accept, wait_accept, connect_to, 1, 0, 0}},
     5},
    {"polls",
     {{"poll", prepare_pipe, wait_poll, NULL, 0, 0, 0},
      {"ppoll", prepare_pipe, wait_ppoll, NULL, 0, 0, 0},
      {"select", prepare_pipe, wait_select, NULL, 0, 0, 0},
      {"epoll_wait", prepare_pipe, wait_epoll_wait, NULL, 0, 0, 0},
      {"epoll_pwait2", prepare_pipe, wait_epoll_pwait2, NULL, 0, 0, 0}},
     5},
    {"sleeps",
     {{"nanosleep", NULL, wait_nanosleep, NULL, 0, 0, 0},
      {"clock_nanosleep", NULL, wait_clock_nanosleep, NULL, 0, 0, 0}},
     2},
    {"process",
     {{"sem_timedwait", NULL, wait_sem_timedwait, NULL, -1, ETIMEDOUT, 0},
      {"pthread_cond_timedwait", NULL, wait_cond_timedwait, NULL, ETIMEDOUT, 0, 0},
      {"sigwaitinfo", NULL, wait_sigwaitinfo, send_usr2, SIGUSR2, 0, 1}},
     3},
    {"pipes",
     {{"read of a pipe", prepare_pipe, wait_pipe_read, write_bytes, 5, 0, 0},
      {"waitpid", prepare_child, wait_waitpid, NULL, 7, 0, 0}},
     2},
};
static const char* const kClassNames[] = {"sockets", "polls", "sleeps", "process", "pipes"};
static const int kClassCount = 5;

struct helper_job {
  struct wait* wait;
  const struct call* call;
};

/* Never calls MPI, so the checker never takes its stack. */
static void* helper(void* argument) {
  struct helper_job* job = argument;
  const struct timespec span = timespec_of(job->wait->seconds);
  while (nanosleep(&span, NULL) != 0) continue;
  job->call->end(job->wait);
  return NULL;
}

/* One call, undisturbed or not: 0 when it gave what it gives undisturbed.
 * Its line goes to `line` (printed by the caller, in the calls' order), or
 * straight to stdout while the job hangs, when it is unexpected. */
static int run_call(const struct call* call, double seconds, char* line, size_t size) {
  struct wait w = {.name = call->name, .seconds = seconds, .fds = {-1, -1}, .thread = pthread_self()};
  if (call->prepare) call->prepare(&w);
  sigset_t usr2, previous;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  if (call->blocks_usr2) pthread_sigmask(SIG_BLOCK, &usr2, &previous);
  pthread_t ender;
  struct helper_job job = {&w, call};
  const int ended_by_helper = call->end != NULL && !hang;
  if (ended_by_helper && pthread_create(&ender, NULL, helper, &job) != 0) fail("pthread_create");
  const double start = now_seconds();
  errno = 0;
  call->wait(&w);
  w.error = errno;
  const double elapsed = now_seconds() - start;
  if (ended_by_helper) pthread_join(ender, NULL);
  if (call->blocks_usr2) pthread_sigmask(SIG_SETMASK, &previous, NULL);
  for (int i = 0; i < 2; ++i)
    if (w.fds[i] >= 0) close(w.fds[i]);
  /* A timeout is never early; a helper's event comes `seconds` after it starts. */
  const int whole = elapsed >= seconds - 0.05;
  const int expected = w.result == call->expected && w.error == call->expected_errno && whole;
  snprintf(line, size, "%s: result %ld, errno %d (%s), %s\n", call->name, w.result, w.error,
           w.error ? strerrorname_np(w.error) : "none", whole ? "its whole time" : "cut short");
  if (hang && !expected) {
    fputs(line, stdout);
    fflush(stdout);
  }
  return expected ? 0 : 1;
}

struct waiter {
  const struct call* call;
  int tag;
  int failed;
  char line[160];
};

/* Known to the checker by one MPI call, then waits; for ever while the job hangs. */
static void* wait_on_thread(void* argument) {
  struct waiter* waiter = argument;
  int sent = waiter->tag, received = -1;
  MPI_Sendrecv(&sent, 1, MPI_INT, 0, waiter->tag, &received, 1, MPI_INT, 0, waiter->tag, MPI_COMM_SELF,
               MPI_STATUS_IGNORE);
  do waiter->failed |= run_call(waiter->call, hang ? kHangSeconds : kThreadsSeconds, waiter->line, sizeof(waiter->line));
  while (hang && !waiter->failed);
  if (waiter->failed && hang) exit(3);
  return NULL;
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  require_thread_multiple(provided);
  const int rank = world_rank_checked(3, 3);
  const struct class* class = &kClasses[variant_argument(argc, argv, 1, "the class of calls", kClassNames, kClassCount)];
  static const char* const kShapes[] = {"threads", "main"};
  const int on_threads = variant_argument(argc, argv, 2, "who waits", kShapes, 2) == 0;
  static const char* const kEndings[] = {"correct", "hang"};
  hang = variant_argument(argc, argv, 3, "how the job ends", kEndings, 2) == 1;
  fprintf(stderr, "pid %d %d\n", rank, (int)getpid());
  MPI_Barrier(MPI_COMM_WORLD);

  int failed = 0;
  if (rank == 0) {
    printf("rank 0 waits in %s %s\n", class->name, on_threads ? "on threads of their own" : "one after another");
    printf("ready\n");
    fflush(stdout);
    if (on_threads) {
      pthread_t threads[kMaxCalls];
      struct waiter waiters[kMaxCalls];
      for (int i = 0; i < class->count; ++i) {
        waiters[i] = (struct waiter){&class->calls[i], i, 0, ""};
        if (pthread_create(&threads[i], NULL, wait_on_thread, &waiters[i]) != 0) fail("pthread_create");
      }
      if (hang) MPI_Recv(NULL, 0, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never sent */
      for (int i = 0; i < class->count; ++i) {
        pthread_join(threads[i], NULL);
        failed |= waiters[i].failed;
        fputs(waiters[i].line, stdout);
      }
    } else {
      char line[160];
      do
        for (int i = 0; i < class->count && !failed; ++i) {
          failed |= run_call(&class->calls[i], hang ? kHangSeconds : kMainSeconds, line, sizeof(line));
          if (!hang) fputs(line, stdout);
        }
      while (hang && !failed);
    }
  } else if (hang) {
    MPI_Recv(NULL, 0, MPI_INT, 3 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks */
  }
  if (failed) exit(3);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("sum of ranks: %d\n", sum);
  MPI_Finalize();
  return 0;
}
