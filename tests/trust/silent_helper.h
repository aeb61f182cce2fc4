/* A library that makes a thread of its own as it loads, before main: the
 * thread waits until the program hands it work (silent_thread.c). */
#ifndef MPISENTRY_TEST_SILENT_HELPER_H
#define MPISENTRY_TEST_SILENT_HELPER_H

/* The library's thread runs work() once. */
void silent_helper_run(void (*work)(void));
/* Waits until work() has returned. */
void silent_helper_join(void);

#endif
