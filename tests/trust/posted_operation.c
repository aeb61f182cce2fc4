/* A large message already under way behind an operation its sender (or
 * receiver) posted and left to MPI while it waits in another call: the
 * other call progresses it. argv[1]: the message's size in MiB, sent as a
 * strided type (one byte in 16) so that packing it takes a while; argv[2]:
 * the variant; argv[3]: "match", a correct program, or "mismatch", its hang
 * twin, where the posted operation has another tag than its peer's.
 *   isend: rank 1 posts MPI_Isend to rank 0 and enters MPI_Barrier; rank 0
 *     is in MPI_Recv of that message, then joins the barrier.
 *   persistent: the same with MPI_Send_init and MPI_Start.
 *   isendrecv: the same with MPI_Isendrecv, whose small receive rank 0
 *     answers after the barrier.
 *   partitioned: the same with MPI_Psend_init, MPI_Start and every
 *     partition readied; rank 0 waits on its MPI_Precv_init request.
 *   irecv: rank 1 posts MPI_Irecv from rank 0 and enters the barrier; rank 0
 *     is in MPI_Send of that message (too large to be buffered).
 *   any_source: rank 0 receives from MPI_ANY_SOURCE while rank 1's MPI_Isend
 *     is under way and rank 2 waits in MPI_Recv for what rank 0 sends after.
 *   sendrecv: rank 0's MPI_Sendrecv has its receive half (from rank 2) done
 *     and its send half to rank 1 under way into rank 1's posted MPI_Irecv;
 *     rank 2 waits in MPI_Recv for what rank 0 sends after.
 *   bsend: as isend, with MPI_Bsend: the call returns once the message is
 *     in the attached buffer, and no request is left; only the count of
 *     messages sent and matched says it is in flight.
 *   ibsend: the same with MPI_Ibsend, waited for before the barrier.
 * argv[4], optional: "contiguous" sends the message as plain bytes, as large
 * as it is (1 GiB goes in MPI's rendezvous protocol); "strided" is the
 * default. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "support.h"

enum Variant { kIsend, kPersistent, kIsendrecv, kPartitioned, kIrecv, kAnySource, kSendrecv, kBsend, kIbsend };
static const char* const kVariants[] = {"isend", "persistent", "isendrecv", "partitioned", "irecv",
                                        "any_source", "sendrecv", "bsend", "ibsend"};
enum { kVariantCount = 9 };
static const char* const kMatching[] = {"match", "mismatch"};
static const char* const kLayouts[] = {"strided", "contiguous"};
enum { kStride = 16, kPartitions = 4, kLargeTag = 5, kSmallTag = 8, kAfterTag = 9 };

static MPI_Datatype large_type;  // one byte in kStride (or every byte), the message's size in all
static char* large;
static int posted_tag = kLargeTag;  // the tag of the posted operation: another one in the hang twin

static void receive_large(int from) {
  MPI_Recv(large, 1, large_type, from, kLargeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks [isend] [persistent] [isendrecv] [bsend] [ibsend] */
}

/* The messages of the buffered sends: the whole message packed, and MPI's own room. */
static void* attach_buffer(void) {
  int bytes = 0;
  MPI_Pack_size(1, large_type, MPI_COMM_WORLD, &bytes);
  bytes += MPI_BSEND_OVERHEAD;
  void* buffer = malloc((size_t)bytes);
  MPI_Buffer_attach(buffer, bytes);
  return buffer;
}

static void sender(enum Variant variant) {
  MPI_Request request = MPI_REQUEST_NULL;
  int small = 0;
  void* attached = variant == kBsend || variant == kIbsend ? attach_buffer() : NULL;
  if (variant == kBsend) {
    MPI_Bsend(large, 1, large_type, 0, posted_tag, MPI_COMM_WORLD);
  } else if (variant == kIbsend) {
    MPI_Ibsend(large, 1, large_type, 0, posted_tag, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else if (variant == kIsend || variant == kAnySource) {
    MPI_Isend(large, 1, large_type, 0, posted_tag, MPI_COMM_WORLD, &request);
  } else if (variant == kPersistent) {
    MPI_Send_init(large, 1, large_type, 0, posted_tag, MPI_COMM_WORLD, &request);
    MPI_Start(&request);
#if MPI_VERSION >= 4
  } else if (variant == kIsendrecv) {
    MPI_Isendrecv(large, 1, large_type, 0, posted_tag, &small, 1, MPI_INT, 0, kAfterTag, MPI_COMM_WORLD, &request);
  } else if (variant == kPartitioned) {
    MPI_Psend_init(large, kPartitions, 1, large_type, 0, posted_tag, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Pready_range(0, kPartitions - 1, request);
#endif
  } else {  /* kIrecv, kSendrecv: the posted receive of rank 0's send */
    MPI_Irecv(large, 1, large_type, 0, posted_tag, MPI_COMM_WORLD, &request);
  }
  MPI_Barrier(MPI_COMM_WORLD); /* mpisentry: blocks [isend] [persistent] [isendrecv] [partitioned] [irecv] [any_source] [sendrecv] [bsend] [ibsend] */
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  if (variant == kPersistent || variant == kPartitioned) MPI_Request_free(&request);
  if (attached) {
    int size = 0;
    MPI_Buffer_detach(&attached, &size);
    free(attached);
  }
  if (variant == kIsendrecv && small != 42) MPI_Abort(MPI_COMM_WORLD, 3);
}

static void receiver(enum Variant variant) {
  const int after = 42;
  if (variant == kPartitioned) {
#if MPI_VERSION >= 4
    MPI_Request request;
    MPI_Precv_init(large, kPartitions, 1, large_type, 1, kLargeTag, MPI_COMM_WORLD, MPI_INFO_NULL, &request);
    MPI_Start(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE); /* mpisentry: blocks [partitioned] */
    MPI_Request_free(&request);
#endif
  } else if (variant == kIrecv) {
    MPI_Send(large, 1, large_type, 1, kLargeTag, MPI_COMM_WORLD); /* mpisentry: blocks [irecv] */
  } else if (variant == kAnySource) {
    MPI_Recv(large, 1, large_type, MPI_ANY_SOURCE, kLargeTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks [any_source] */
    MPI_Send(&after, 1, MPI_INT, 2, kAfterTag, MPI_COMM_WORLD);
  } else if (variant == kSendrecv) {
    int small = 0;
    MPI_Sendrecv(large, 1, large_type, 1, kLargeTag, &small, 1, MPI_INT, 2, kSmallTag, /* mpisentry: blocks [sendrecv] */
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&after, 1, MPI_INT, 2, kAfterTag, MPI_COMM_WORLD);
  } else {
    receive_large(1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (variant == kIsendrecv) MPI_Send(&after, 1, MPI_INT, 1, kAfterTag, MPI_COMM_WORLD);
}

/* Rank 2 of any_source and sendrecv: waits for what rank 0 sends after its
 * large message. */
static void third(enum Variant variant) {
  int after = 0;
  const int small = 7;
  if (variant == kSendrecv) MPI_Send(&small, 1, MPI_INT, 0, kSmallTag, MPI_COMM_WORLD);
  MPI_Recv(&after, 1, MPI_INT, 0, kAfterTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* mpisentry: blocks [any_source] [sendrecv] */
  MPI_Barrier(MPI_COMM_WORLD);
  if (after != 42) MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long mebibytes = count_argument(argc, argv, 1, "the message's size in MiB");
  const enum Variant variant = variant_argument(argc, argv, 2, "variant", kVariants, kVariantCount);
  const int mismatch = variant_argument(argc, argv, 3, "whether the posted operation matches", kMatching, 2);
  const int contiguous = argc > 4 && variant_argument(argc, argv, 4, "the message's layout", kLayouts, 2);
  const int stride = contiguous ? 1 : kStride;
  const int ranks = variant == kAnySource || variant == kSendrecv ? 3 : 2;
  const int rank = world_rank_checked(ranks, ranks);
#if MPI_VERSION < 4
  if (variant == kIsendrecv || variant == kPartitioned)
    lacks_mpi4(variant == kIsendrecv ? "MPI_Isendrecv" : "MPI_Psend_init");
#endif
  if (mismatch) posted_tag = kLargeTag + 1;
  const long bytes = mebibytes * 1024 * 1024 / (variant == kPartitioned ? kPartitions : 1);
  MPI_Type_vector((int)bytes, 1, stride, MPI_CHAR, &large_type);
  MPI_Type_commit(&large_type);
  large = calloc((size_t)bytes * stride * (variant == kPartitioned ? kPartitions : 1), 1);
  if (rank == 0)
    receiver(variant);
  else if (rank == 1)
    sender(variant);
  else
    third(variant);
  /* MPICH 4.0.2's MPI_Isendrecv drops a reference to a derived type it does
   * not hold, and freeing the type then fails an assertion: kept. */
  if (variant != kIsendrecv) MPI_Type_free(&large_type);
  free(large);
  if (rank == 0) printf("rank 0 received the large message, the others what it sent after\n");
  MPI_Finalize();
  return 0;
}
