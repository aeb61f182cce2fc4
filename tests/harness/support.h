/* Helpers shared by the test programs: argument and rank-count checks that
 * stop the job with a message naming the problem, and computation that makes
 * no MPI call. */
#ifndef MPISENTRY_TEST_PROGRAMS_SUPPORT_H
#define MPISENTRY_TEST_PROGRAMS_SUPPORT_H

#ifdef __cplusplus
extern "C" {
#endif

/* This rank's MPI_COMM_WORLD rank; aborts the job unless the world has
 * exactly min_ranks ranks (max_ranks == min_ranks) or at least min_ranks
 * (max_ranks 0). */
int world_rank_checked(int min_ranks, int max_ranks);

/* Aborts the job unless MPI_Init_thread provided MPI_THREAD_MULTIPLE. */
void require_thread_multiple(int provided);

/* argv[index] as a number of seconds >= 0; aborts the job naming `meaning`
 * when it is missing or not a number. */
double seconds_argument(int argc, char** argv, int index, const char* meaning);

/* argv[index] as a whole number >= 1; aborts the job naming `meaning` when
 * it is missing or not one. */
long count_argument(int argc, char** argv, int index, const char* meaning);

/* The index in names[0..count) of argv[index]; aborts the job naming
 * `meaning` and the accepted names when it is missing or none of them. */
int variant_argument(int argc, char** argv, int index, const char* meaning, const char* const names[], int count);

/* Seconds on a monotonic clock, for bounding loops. */
double now_seconds(void);

/* Busy for `seconds` of wall-clock time without calling MPI: a rank that
 * computes. */
void compute_for(double seconds);

/* Under an MPI older than 4.0 (Open MPI 4.1), in place of the calls of a
 * program that need MPI 4.0's `functions`: says so and ends the program with
 * status 77. */
void lacks_mpi4(const char* functions);

#ifdef __cplusplus
}
#endif

#endif
