#include "trackers/owned_buffers.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <optional>

#include "trackers/signature.hpp"
#include "trackers/thread_lock.hpp"
#include "records/handle_slots.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_overlaps = false;
}

namespace {
void (*conflict_listener)(const BufferConflict& conflict) = nullptr;
}

namespace {

// The bytes [low, high) of a buffer.
struct Span {
  std::uintptr_t low = 0, high = 0;
};

// The tables are split by address into shards, each with its own lock, so
// that threads whose buffers lie apart do not wait for each other. Memory is
// cut into granules of 64 KiB, each granule hashed to a shard; a buffer is
// kept in the shards of every granule it touches (all of them past 16
// granules), so two buffers that share a byte share a shard.
constexpr std::size_t kBufferShards = 16;
constexpr unsigned kGranuleBits = 16;
using ShardSet = std::uint16_t;
static_assert(sizeof(ShardSet) * 8 == kBufferShards);
constexpr ShardSet kAllShards = static_cast<ShardSet>(~0u);

// Reads apart from writes: a new buffer MPI reads is compared only with the
// writes, so that many sends from one buffer cost no search among each
// other.
struct alignas(64) BufferShard {  // cache lines of its own, as the requests' shards
  SpinMutex mutex;  // at MPI_THREAD_MULTIPLE
  PendingSpans reads, writes;
};

struct OverlapsState {
  bool multiple_threads = false;
  BufferShard shards[kBufferShards];
};

OverlapsState& overlaps_state() {
  static OverlapsState* const instance = new OverlapsState;  // never destroyed: wrappers may run during exit
  return *instance;
}

ShardSet shards_of(const Span& span) {
  const std::uintptr_t first = span.low >> kGranuleBits, last = (span.high - 1) >> kGranuleBits;
  if (last - first >= kBufferShards) return kAllShards;
  ShardSet set = 0;
  for (std::uintptr_t granule = first; granule <= last; ++granule)
    set |= static_cast<ShardSet>(1u << handle_slots::home_of<kBufferShards>(granule));
  return set;
}

// Calls visit(BufferShard&) for each shard of `set`, in ascending order.
template <typename Visit>
void for_each_shard(OverlapsState& s, ShardSet set, Visit&& visit) {
  for (unsigned bits = set; bits != 0; bits &= bits - 1) visit(s.shards[std::countr_zero(bits)]);
}

// Holds the locks of a set of shards, taken in ascending order (so that two
// sets never wait for each other in a cycle), when threads share the tables.
class ShardLocks {
 public:
  ShardLocks(OverlapsState& s, ShardSet set) : state_(s), set_(s.multiple_threads ? set : 0) {
    for_each_shard(state_, set_, [](BufferShard& shard) { shard.mutex.lock(); });
  }
  ~ShardLocks() {
    for_each_shard(state_, set_, [](BufferShard& shard) { shard.mutex.unlock(); });
  }
  ShardLocks(const ShardLocks&) = delete;
  ShardLocks& operator=(const ShardLocks&) = delete;

 private:
  OverlapsState& state_;
  ShardSet set_;
};

// A kept buffer's order, unique among the buffers of all threads: a thread
// takes its orders from a block of its own, and only a new block from the
// counter all threads share.
constexpr std::uint64_t kOrderBlock = std::uint64_t{1} << 16;
std::atomic<std::uint64_t> orders_handed_out{0};
struct OrderBlock {
  std::uint64_t next = 0, end = 0;
};
constinit thread_local OrderBlock orders_of_thread __attribute__((tls_model("initial-exec")));

std::uint64_t next_order() {
  OrderBlock& block = orders_of_thread;
  if (block.next == block.end) {
    block.next = orders_handed_out.fetch_add(kOrderBlock, std::memory_order_relaxed) + 1;  // never 0
    block.end = block.next + kOrderBlock;
  }
  return block.next++;
}

// The bytes of `count` elements of `type` at `buffer` when the type lays
// them out without gaps; none otherwise (and for an empty buffer).
std::optional<Span> span_of(const void* buffer, std::int64_t count, MPI_Datatype type) {
  if (buffer == MPI_IN_PLACE) return std::nullopt;
  const std::optional<DenseBytes> dense = dense_bytes(count, type);
  if (!dense) return std::nullopt;
  const std::uintptr_t low = reinterpret_cast<std::uintptr_t>(buffer) + static_cast<std::uintptr_t>(dense->first);
  return Span{low, low + static_cast<std::uintptr_t>(dense->bytes)};
}

// `candidate` (a pending buffer found under its shard's lock, or null) into
// `lowest` when it starts before what `lowest` holds (`found`: it holds one).
// Copied only when found: an optional assigned every call is written narrow
// and read back wide, which waits (store forwarding fails).
void keep_lowest(const PendingBuffer* candidate, PendingBuffer& lowest, bool& found) {
  if (candidate == nullptr || (found && candidate->low >= lowest.low)) return;
  lowest = *candidate;
  found = true;
}

PendingSpans& table_of(BufferShard& shard, BufferUse use) { return use == BufferUse::Write ? shard.writes : shard.reads; }

// Compares the buffer with the pending ones and tells of one conflict, the
// pending write that starts lowest, else (for a buffer MPI writes) the
// pending read that does, whichever shards they are kept in; with `kept`,
// the buffer stays pending until released.
void compare(TakenBuffer* kept, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
             FunctionId function, const void* call_site) {
  const std::optional<Span> span = span_of(buffer, count, type);
  if (!span) return;
  OverlapsState& s = overlaps_state();
  const ShardSet shards = shards_of(*span);
  const std::uint64_t order = kept ? next_order() : 0;
  // Copied out under the locks, to report after them (a table may move them).
  PendingBuffer write, read;
  bool write_found = false, read_found = false;
  {
    const ShardLocks locks(s, shards);
    for_each_shard(s, shards, [&](BufferShard& shard) {
      keep_lowest(shard.writes.first_overlapping(span->low, span->high), write, write_found);
      if (use == BufferUse::Write) keep_lowest(shard.reads.first_overlapping(span->low, span->high), read, read_found);
      if (kept) table_of(shard, use).add(span->low, span->high, use, function, call_site, order);
    });
  }
  if (kept) {
    kept->shards = shards;
    kept->use = use;
    kept->low = span->low;
    kept->order = order;
  }
  if (write_found || read_found)
    conflict_listener({span->low, span->high, use, function, write_found ? write : read});
}

}  // namespace

void start_owned_buffers(const StartContext& context) {
  detail::watching_overlaps = false;
  conflict_listener = nullptr;
  overlaps_state().multiple_threads = context.multiple_threads;
}

void listen_for_buffer_conflicts(void (*listener)(const BufferConflict& conflict)) {
  conflict_listener = listener;
  detail::watching_overlaps = true;
}

void buffer_taken(TakenBuffer& taken, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
                  FunctionId function, const void* call_site) {
  compare(&taken, buffer, count, type, use, function, call_site);
}

void buffer_released(TakenBuffer& taken) {
  OverlapsState& s = overlaps_state();
  for_each_shard(s, taken.shards, [&](BufferShard& shard) {
    const LockIfMultiple guard(shard.mutex, s.multiple_threads);
    table_of(shard, taken.use).remove(taken.low, taken.order);
  });
  taken = {};
}

void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function) {
  compare(nullptr, buffer, count, type, use, function, nullptr);
}

}  // namespace mpisentry::checks
