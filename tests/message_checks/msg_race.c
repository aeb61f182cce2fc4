/* Receives from MPI_ANY_SOURCE on rank 0, tag 7, in the shape argv[1]:
 *   raced:   every other rank sends one message at once; rank 0 waits
 *            300 ms, then receives them with MPI_Recv(MPI_ANY_SOURCE). Every
 *            receive but the last could have taken another rank's message.
 *   waitall: the same, received by one MPI_Irecv(MPI_ANY_SOURCE) per sender
 *            and one MPI_Waitall.
 *   probe, iprobe, mprobe: the same, each message found by MPI_Probe, a loop
 *            of MPI_Iprobe or MPI_Mprobe from MPI_ANY_SOURCE, then received
 *            from the rank found (MPI_Mrecv for mprobe).
 *   waitany: the same, received by one MPI_Irecv from each sender and
 *            MPI_Waitany until all came: each call but the last could have
 *            returned another request.
 *   relayed: rank 1 sends to rank 0, then a token to rank 2, which then sends
 *            to rank 0; rank 0 waits 300 ms, then receives both. Rank 2's
 *            message comes after rank 1's along a chain of messages, but not
 *            after rank 0's first receive: it could have been taken first.
 *   causal:  rank 1 sends to rank 0; rank 0 receives it, then sends a token
 *            to rank 2, which then sends to rank 0; rank 0 receives it. Rank
 *            2's message is caused by rank 0's first receive: no race.
 *   unreceived: ranks 1 and 2 send one message each; rank 0 waits 300 ms and
 *            receives one of them: the other, never received, could have
 *            been taken instead.
 *   ssend_relayed: rank 0 starts MPI_Irecv(MPI_ANY_SOURCE) and an MPI_Irecv
 *            from rank 3, which sends after 300 ms, and waits for both; rank 1
 *            sends by MPI_Ssend, which returns once rank 0's receive matched
 *            it, then a token to rank 2, which then sends to rank 0 long
 *            before the first receive returned: caused by it, no race.
 *   waitany_causal: rank 0 receives from ranks 1 and 2 with MPI_Irecv and
 *            MPI_Waitany; rank 2 sends only when rank 0 tells it to, after
 *            the first MPI_Waitany returned rank 1's: no race.
 *   earlier: an MPI_Irecv(MPI_ANY_SOURCE) of tag 8 is active while rank 0
 *            receives two raced messages of tag 7 (it gets its own from rank
 *            1 afterwards): those receives are not judged.
 * Rank 0 prints how many messages of tag 7 it received and the sum of their
 * senders, the same in every order. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void pause_ms(long ms) {
  const struct timespec pause = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* shape = argc > 1 ? argv[1] : "";
  int value = rank, got[64];
  int received = 0;
  if (size < 3 || size > 64) {
    fprintf(stderr, "msg_race: run on 3 to 64 ranks\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int probed = strcmp(shape, "probe") == 0 || strcmp(shape, "iprobe") == 0 || strcmp(shape, "mprobe") == 0;
  if (strcmp(shape, "raced") == 0 || strcmp(shape, "waitall") == 0 || strcmp(shape, "waitany") == 0 || probed) {
    if (rank != 0) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (strcmp(shape, "raced") == 0) {
      pause_ms(300);
      for (int i = 1; i < size; ++i)
        MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: raced */
    } else if (strcmp(shape, "waitall") == 0) {
      MPI_Request requests[64] = {MPI_REQUEST_NULL};
      pause_ms(300);
      for (int i = 1; i < size; ++i)
        MPI_Irecv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &requests[i - 1]); /* mpisentry: waitall */
      MPI_Status statuses[64];
      MPI_Waitall(size - 1, requests, statuses);
    } else if (strcmp(shape, "waitany") == 0) {
      MPI_Request requests[64] = {MPI_REQUEST_NULL};
      for (int i = 1; i < size; ++i)
        MPI_Irecv(&got[received++], 1, MPI_INT, i, 7, MPI_COMM_WORLD, &requests[i - 1]);
      pause_ms(300);
      for (int i = 1; i < size; ++i) {
        int index;
        MPI_Waitany(size - 1, requests, &index, MPI_STATUS_IGNORE); /* mpisentry: waitany */
      }
    } else {
      pause_ms(300);
      for (int i = 1; i < size; ++i) {
        MPI_Status status;
        if (strcmp(shape, "mprobe") == 0) {
          MPI_Message message;
          MPI_Mprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &message, &status); /* mpisentry: mprobe */
          MPI_Mrecv(&got[received++], 1, MPI_INT, &message, MPI_STATUS_IGNORE);
          continue;
        }
        if (strcmp(shape, "probe") == 0) {
          MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &status); /* mpisentry: probe */
        } else {
          int found = 0;
          while (!found) MPI_Iprobe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &found, &status); /* mpisentry: iprobe */
        }
        MPI_Recv(&got[received++], 1, MPI_INT, status.MPI_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
    }
  } else if (strcmp(shape, "relayed") == 0 || strcmp(shape, "causal") == 0) {
    const int relayed = strcmp(shape, "relayed") == 0;
    int token = 0;
    if (rank == 1) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
      if (relayed) MPI_Send(&token, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
    } else if (rank == 2) {
      MPI_Recv(&token, 1, MPI_INT, relayed ? 1 : 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
      if (relayed) pause_ms(300);
      MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: first */
      if (!relayed) MPI_Send(&token, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
      MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (strcmp(shape, "unreceived") == 0) {
    if (rank == 1 || rank == 2) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 0) {
      pause_ms(300);
      MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: unreceived */
    }
  } else if (strcmp(shape, "ssend_relayed") == 0) {
    int token = 0;
    if (rank == 0) {
      MPI_Request requests[2];
      MPI_Status statuses[2];
      int late;
      MPI_Irecv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &requests[0]);
      MPI_Irecv(&late, 1, MPI_INT, 3, 8, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitall(2, requests, statuses);
      MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Ssend(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
      MPI_Send(&token, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
    } else if (rank == 2) {
      MPI_Recv(&token, 1, MPI_INT, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 3) {
      pause_ms(300);
      MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
    }
  } else if (strcmp(shape, "waitany_causal") == 0) {
    if (rank == 0) {
      MPI_Request requests[2];
      int index, token = 0;
      MPI_Irecv(&got[received++], 1, MPI_INT, 1, 7, MPI_COMM_WORLD, &requests[0]);
      MPI_Irecv(&got[received++], 1, MPI_INT, 2, 7, MPI_COMM_WORLD, &requests[1]);
      MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
      MPI_Send(&token, 1, MPI_INT, 2, 9, MPI_COMM_WORLD);
      MPI_Waitany(2, requests, &index, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    } else if (rank == 2) {
      MPI_Recv(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      value = rank;
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
    }
  } else if (strcmp(shape, "earlier") == 0) {
    if (rank == 0) {
      MPI_Request tag_8;
      int late;
      MPI_Irecv(&late, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &tag_8);
      pause_ms(300);
      for (int i = 1; i < 3; ++i)
        MPI_Recv(&got[received++], 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(&value, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
      MPI_Wait(&tag_8, MPI_STATUS_IGNORE);
    } else if (rank <= 2) {
      MPI_Send(&value, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
      if (rank == 1) {
        MPI_Recv(&value, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&value, 1, MPI_INT, 0, 8, MPI_COMM_WORLD);
      }
    }
  } else {
    fprintf(stderr, "usage: msg_race <raced|waitall|probe|iprobe|mprobe|waitany|relayed|unreceived|causal|ssend_relayed|waitany_causal|earlier>\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 0) {
    int sum = 0;
    for (int i = 0; i < received; ++i) sum += got[i];
    printf("received %d, senders' sum %d\n", received, sum);
  }
  MPI_Finalize();
  return 0;
}
