/* Handles left behind, or not. argv[1]:
 *   "leak": rank 1 makes a communicator, a group, an operation, a datatype,
 *     a window, a file and an info object and frees none of them but the
 *     window, and takes the group of MPI_COMM_WORLD twice and frees it once;
 *   "leak_window": rank 1 frees all of them but the window (MPICH then
 *     aborts in MPI_Finalize, with the checker or without);
 *   "clean": the same, every handle freed (the world group twice), and the
 *     handles MPI hands out that need no free: MPI_COMM_NULL from a split
 *     with MPI_UNDEFINED, MPI_GROUP_EMPTY from an empty MPI_Group_incl;
 *   "loop": rank 0 leaks 25 datatypes at one call site.
 * argv[2]: a directory for the file. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static void add(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

/* A file that MPI_File_close deletes. */
#define CREATE_DELETED (MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE)

static void make_handles(const char* dir, int frees_window, int frees_others) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_SELF, &comm); /* mpisentry: comm */
  MPI_Group group;
  MPI_Comm_group(MPI_COMM_WORLD, &group); /* mpisentry: group */
  MPI_Group again;
  MPI_Comm_group(MPI_COMM_WORLD, &again);
  MPI_Op op;
  MPI_Op_create(add, 1, &op); /* mpisentry: op */
  MPI_Datatype type;
  MPI_Type_vector(2, 1, 2, MPI_INT, &type); /* mpisentry: datatype */
  MPI_Type_commit(&type);
  MPI_Win win;
  int* window_memory;
  MPI_Win_allocate(16, sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &window_memory, &win); /* mpisentry: win */
  char path[4096];
  snprintf(path, sizeof path, "%s/handle_leaks.dat", dir);
  MPI_File file;
  MPI_File_open(MPI_COMM_SELF, path, CREATE_DELETED, MPI_INFO_NULL, &file); /* mpisentry: file */
  MPI_Info info;
  MPI_Info_create(&info); /* mpisentry: info */
  MPI_Info_set(info, "key", "value");

  int sum = 0, one = 1;
  MPI_Reduce(&one, &sum, 1, MPI_INT, op, 0, comm);
  if (sum != 1) MPI_Abort(MPI_COMM_WORLD, 3);

  MPI_Group_free(&again);
  if (frees_window) MPI_Win_free(&win);
  if (!frees_others) return;
  MPI_Comm_free(&comm);
  MPI_Group_free(&group);
  MPI_Op_free(&op);
  MPI_Type_free(&type);
  MPI_File_close(&file);
  MPI_Info_free(&info);
}

/* Handles that MPI hands out and that are null or predefined. */
static void make_nothing(void) {
  MPI_Comm none;
  MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, 0, &none);
  if (none != MPI_COMM_NULL) MPI_Abort(MPI_COMM_WORLD, 4);
  MPI_Group world, empty;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, 0, NULL, &empty);
  MPI_Group_free(&empty);
  MPI_Group_free(&world);
}

static void leak_types(void) {
  for (int i = 0; i < 25; ++i) {
    MPI_Datatype type;
    MPI_Type_contiguous(i + 1, MPI_INT, &type); /* mpisentry: loop */
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char* mode = argc > 1 ? argv[1] : "clean";
  const char* dir = argc > 2 ? argv[2] : ".";
  if (strcmp(mode, "leak") == 0) {
    if (rank == 1) make_handles(dir, 1, 0);
  } else if (strcmp(mode, "leak_window") == 0) {
    if (rank == 1) make_handles(dir, 0, 1);
  } else if (strcmp(mode, "loop") == 0) {
    if (rank == 0) leak_types();
  } else {
    if (rank == 1) make_handles(dir, 1, 1);
    make_nothing();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("handles done\n");
  MPI_Finalize();
  return 0;
}
