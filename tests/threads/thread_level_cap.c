/* A preloaded library for one test: an MPI that cannot give
 * MPI_THREAD_MULTIPLE, made from MPICH (which can) by lowering what
 * MPI_Init_thread provides and what MPI_Query_thread says to
 * MPI_THREAD_SERIALIZED. It defines the MPI_ names, which the program calls,
 * and the PMPI_ names, which the checker calls; each calls the next
 * definition of its own name. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*InitThread)(int*, char***, int, int*);
typedef int (*QueryThread)(int*);

static void* next_definition(const char* name) {
  void* next = dlsym(RTLD_NEXT, name);
  if (!next) {
    fprintf(stderr, "thread_level_cap: no %s after this library: preload it with MPI's library loaded\n", name);
    abort();
  }
  return next;
}

static int capped(int level) { return level > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : level; }

static int init_thread(const char* name, int* argc, char*** argv, int required, int* provided) {
  const int result = ((InitThread)next_definition(name))(argc, argv, required, provided);
  *provided = capped(*provided);
  return result;
}

static int query_thread(const char* name, int* provided) {
  const int result = ((QueryThread)next_definition(name))(provided);
  *provided = capped(*provided);
  return result;
}

__attribute__((visibility("default"))) int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return init_thread("MPI_Init_thread", argc, argv, required, provided);
}
__attribute__((visibility("default"))) int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return init_thread("PMPI_Init_thread", argc, argv, required, provided);
}
__attribute__((visibility("default"))) int MPI_Query_thread(int* provided) {
  return query_thread("MPI_Query_thread", provided);
}
__attribute__((visibility("default"))) int PMPI_Query_thread(int* provided) {
  return query_thread("PMPI_Query_thread", provided);
}
