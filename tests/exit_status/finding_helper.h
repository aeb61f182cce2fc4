/* A shared library of finding_job's, for suppressions by library. */
#ifndef MPISENTRY_TEST_FINDING_HELPER_H
#define MPISENTRY_TEST_FINDING_HELPER_H

/* Makes a communicator it never frees (LOCAL:COMM:NOT_FREED). */
void lib_make_comm(void);

#endif
