#include "trackers/checksums.hpp"

#include <atomic>
#include <climits>
#include <optional>
#include <vector>

#include <fmt/format.h>
// XXH3 for the checksums, the bulk of a large message's cost under these
// checks: inline for short buffers, the library's vectorized code for long
// ones (hash_bytes).
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "trackers/signature.hpp"
#include "records/thread_state.hpp"

namespace mpisentry::checks {

namespace {

std::atomic<std::uint64_t> derived_types_freed{0};

// Whether this process is the root of the MPI_Ibcast (or persistent
// broadcast) that `r` records, whose buffer it then sends from.
bool broadcasts(const CallRecord& r) {
  if (r.peer == MPI_ROOT) return true;  // the root of an inter-communicator broadcast
  if (r.peer == MPI_PROC_NULL) return false;
  int inter = 0, rank = -1;
  PMPI_Comm_test_inter(r.comm, &inter);
  if (inter) return false;  // a receiver in the other group
  PMPI_Comm_rank(r.comm, &rank);
  return rank == r.peer;
}

// The blocks in the send buffer of an all-to-all or a reduce-scatter
// (MPI_Reduce_scatter_block) on `comm`: one per member of an
// intra-communicator; on an inter-communicator only the first is claimed.
std::int64_t send_blocks(MPI_Comm comm) {
  int inter = 0, size = 1;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter) return 1;
  PMPI_Comm_size(comm, &size);
  return size;
}

// The part of the record's buffer that the operation sends, as the record
// has it: a point-to-point send's buffer; a collective's send buffer (for
// the all-to-all and reduce-scatter forms, whose record counts one block,
// every member's block); none for receives, for MPI_IN_PLACE, for a
// scatter (its record holds the receive side) and for a rooted call's root
// side of an inter-communicator, whose send buffer MPI ignores.
std::optional<BufferPart> sending_part(const CallRecord& r) {
  if (r.buffer == MPI_IN_PLACE || r.datatype == MPI_DATATYPE_NULL || r.count <= 0) return std::nullopt;
  const BufferPart part{r.buffer, r.count, r.datatype};
  if (r.shape == CallShape::Send) return part;
  if (r.shape != CallShape::Collective && r.shape != CallShape::Rooted) return std::nullopt;
  switch (function_info(r.function).pattern) {
    case Pattern::Bcast: return broadcasts(r) ? std::optional(part) : std::nullopt;
    case Pattern::Gather:
    case Pattern::Reduce:
      if (r.shape == CallShape::Rooted && (r.peer == MPI_ROOT || r.peer == MPI_PROC_NULL)) return std::nullopt;
      return part;
    case Pattern::Allgather: return part;
    case Pattern::Alltoall:
    case Pattern::ReduceScatter: return BufferPart{r.buffer, r.count * send_blocks(r.comm), r.datatype};
    default: return std::nullopt;
  }
}

// The checker's duplicate of MPI_COMM_SELF to pack on: the program's
// communicator may be freed while the operation is pending, and its errors
// return, so that a buffer MPI will not pack (MPICH 4.0.2 refuses
// MPI_BOTTOM) is not compared instead of ending the program.
MPI_Comm pack_comm = MPI_COMM_NULL;

#if defined(__x86_64__)
// Debian's libxxhash on x86-64 picks SSE2, AVX2 or AVX-512 when loaded: a
// 64 KiB buffer in an eighth of the inline SSE2 code's time. Declared here
// because XXH_INLINE_ALL makes its header's declaration static.
extern "C" XXH64_hash_t XXH3_64bits_dispatch(const void* input, std::size_t size);
#endif

// The same hash either way; the call into the library costs more than the
// inline code saves below a kilobyte.
std::uint64_t hash_bytes(const void* bytes, std::size_t size) {
#if defined(__x86_64__)
  if (size > 1024) return XXH3_64bits_dispatch(bytes, size);
#endif
  return XXH3_64bits(bytes, size);
}

// The bytes the datatype (`type`, from the cache) lays out, packed on
// pack_comm.
std::optional<std::uint64_t> checksum(const BufferPart& part, const TypeInfo& type) {
  if (part.count > INT_MAX) return std::nullopt;
  const int count = static_cast<int>(part.count);
  if (type.named && part.buffer != MPI_BOTTOM && type.true_lb == 0 && type.size == type.extent)
    return hash_bytes(part.buffer, static_cast<std::size_t>(type.size) * part.count);  // no gaps: the bytes themselves
  int packed_size = 0;
  if (PMPI_Pack_size(count, part.type, pack_comm, &packed_size) != MPI_SUCCESS) return std::nullopt;
  thread_local std::vector<unsigned char> packed;
  packed.resize(static_cast<std::size_t>(packed_size));
  int position = 0;
  if (PMPI_Pack(part.buffer, count, part.type, packed.data(), packed_size, &position, pack_comm) != MPI_SUCCESS)
    return std::nullopt;
  return hash_bytes(packed.data(), static_cast<std::size_t>(position));
}

}  // namespace

void start_checksums(const StartContext&) {
  if (!on(report::Check::MemoryIllegalModification)) return;
  PMPI_Comm_dup(MPI_COMM_SELF, &pack_comm);
  PMPI_Comm_set_errhandler(pack_comm, MPI_ERRORS_RETURN);
}

void sum_into(const BufferPart& part, BufferChecksum& into) {
  into = {};
  if (part.count <= 0 || part.type == MPI_DATATYPE_NULL) return;
  const TypeRef type = type_info(part.type);
  const bool derived = !type->named;
  const std::uint64_t types_freed = datatypes_freed();
  const std::optional<std::uint64_t> value = checksum(part, *type);
  if (!value) return;
  into.taken = true;
  into.value = *value;
  into.buffer = part.buffer;
  into.count = part.count;
  into.type = part.type;
  into.types_freed = types_freed;
  into.derived = derived;
}

void sum_send_buffer(const CallRecord& started, BufferChecksum& into) {
  if (const std::optional<BufferPart> part = sending_part(started))
    sum_into(*part, into);
  else
    into = {};
}

bool buffer_changed(const BufferChecksum& then) {
  if (!then.taken) return false;
  if (then.derived && datatypes_freed() != then.types_freed) return false;
  const std::optional<std::uint64_t> now = checksum({then.buffer, then.count, then.type}, *type_info(then.type));
  return now && *now != then.value;
}

namespace {

// The MPI call this thread is in: the one completing the operation.
const char* completing_call() {
  ThreadState::Sample self;
  if (this_thread_state().sample(self) && self.in_call) return function_info(self.call.function).name;
  return "the call that completed it";
}

}  // namespace

report::Finding modified_buffer_finding(const char* buffer, const char* started_by, const std::string& start,
                                        const std::string& started_call, const void* started_at) {
  const char* completed_by = completing_call();
  report::Finding finding;
  finding.check = report::Check::MemoryIllegalModification;
  finding.summary = {fmt::format("The {} of {} was written while MPI owned it: its bytes when {} completed "
                                 "the operation differ from its bytes when it started ({}).",
                                 buffer, started_by, completed_by, start),
                     fmt::format("MPI owns the {} until the operation completes; the program may read it, not "
                                 "write it.", buffer)};
  finding.parties.push_back({{world_rank()}, "completes it", completed_by, {}});
  finding.parties.push_back({{world_rank()}, "started it", started_call, call_site_stack(started_at)});
  finding.key = fmt::format("modified {} {}", started_by, started_at);
  return finding;
}

void datatype_freed() noexcept { derived_types_freed.fetch_add(1, std::memory_order_acq_rel); }

std::uint64_t datatypes_freed() noexcept { return derived_types_freed.load(std::memory_order_acquire); }

}  // namespace mpisentry::checks
