/* The library of silent_helper.h: its thread is made by the loader's call
 * of its constructor, and sleeps on a condition variable until given work. */
#include "silent_helper.h"

#include <pthread.h>
#include <stddef.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static void (*given)(void);
static int done;
static pthread_t thread;

static void* wait_for_work(void* unused) {
  (void)unused;
  pthread_mutex_lock(&lock);
  while (!given) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  given();
  pthread_mutex_lock(&lock);
  done = 1;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
  return NULL;
}

__attribute__((constructor)) static void start(void) { pthread_create(&thread, NULL, wait_for_work, NULL); }

void silent_helper_run(void (*work)(void)) {
  pthread_mutex_lock(&lock);
  given = work;
  pthread_cond_broadcast(&changed);
  pthread_mutex_unlock(&lock);
}

void silent_helper_join(void) {
  pthread_mutex_lock(&lock);
  while (!done) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
}
