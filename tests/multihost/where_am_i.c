/* Shows that the ranks run on different hosts and talk over TCP: each rank
 * exchanges 1 MiB with the rank half the job away (on another host when the
 * job fills its hosts in two halves), then prints its host name and how many
 * established TCP connections its network namespace holds from its own
 * address to another host of the bed (10.77.0.1-253; .254 is mpiexec's). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

enum { kBytes = 1 << 20 };

/* IPv4 connections in /proc/net/tcp: "sl local rem st ...", addresses as
 * little-endian hex "0100004D0A:port", established is state 01. */
static int tcp_connections_to_other_hosts(void) {
  FILE* table = fopen("/proc/net/tcp", "r");
  if (table == NULL) return -1;
  char line[512];
  int count = 0;
  if (fgets(line, sizeof line, table) == NULL) line[0] = '\0'; /* the header */
  while (fgets(line, sizeof line, table) != NULL) {
    unsigned local = 0, remote = 0, state = 0;
    if (sscanf(line, " %*d: %8x:%*x %8x:%*x %x", &local, &remote, &state) != 3) continue;
    const unsigned subnet = 0x004D0Au; /* 10.77.0 */
    const unsigned local_host = local >> 24, remote_host = remote >> 24;
    if (state == 1 && (local & 0xffffffu) == subnet && (remote & 0xffffffu) == subnet && remote_host != local_host &&
        remote_host != 254)
      ++count;
  }
  fclose(table);
  return count;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 0;
  const int rank = world_rank_checked(2, 0);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int partner = (rank + size / 2) % size;
  char* out = malloc(kBytes);
  char* in = malloc(kBytes);
  memset(out, rank, kBytes);
  MPI_Sendrecv(out, kBytes, MPI_CHAR, partner, 0, in, kBytes, MPI_CHAR, partner, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  const int received_right = in[0] == (char)partner && in[kBytes - 1] == (char)partner;
  char host[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(host, &length);
  const int connections = tcp_connections_to_other_hosts();
  /* One line per rank, in rank order. */
  for (int turn = 0; turn < size; ++turn) {
    if (turn == rank) {
      printf("rank %d host %s partner %d received %s tcp_to_other_hosts %d\n", rank, host, partner,
             received_right ? "right" : "wrong", connections);
      fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  free(out);
  free(in);
  MPI_Finalize();
  return 0;
}
