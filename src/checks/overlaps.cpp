#include "checks/overlaps.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <optional>

#include <fmt/format.h>

#include "checks/findings.hpp"
#include "checks/messages.hpp"
#include "checks/signature.hpp"
#include "checks/thread_lock.hpp"
#include "records/handle_slots.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_overlaps = false;
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
constexpr std::size_t kShards = 16;
constexpr unsigned kGranuleBits = 16;
using ShardSet = std::uint16_t;
static_assert(sizeof(ShardSet) * 8 == kShards);
constexpr ShardSet kAllShards = static_cast<ShardSet>(~0u);

// Reads apart from writes: a new buffer MPI reads is compared only with the
// writes, so that many sends from one buffer cost no search among each
// other.
struct alignas(64) Shard {  // a cache line of its own, as the requests' shards
  SpinMutex mutex;  // at MPI_THREAD_MULTIPLE
  PendingSpans reads, writes;
};

struct State {
  bool multiple_threads = false;
  Shard shards[kShards];
};

State& state() {
  static State* const instance = new State;  // never destroyed: wrappers may run during exit
  return *instance;
}

ShardSet shards_of(const Span& span) {
  const std::uintptr_t first = span.low >> kGranuleBits, last = (span.high - 1) >> kGranuleBits;
  if (last - first >= kShards) return kAllShards;
  ShardSet set = 0;
  for (std::uintptr_t granule = first; granule <= last; ++granule)
    set |= static_cast<ShardSet>(1u << handle_slots::home_of<kShards>(granule));
  return set;
}

// Calls visit(Shard&) for each shard of `set`, in ascending order.
template <typename Visit>
void for_each_shard(State& s, ShardSet set, Visit&& visit) {
  for (unsigned bits = set; bits != 0; bits &= bits - 1) visit(s.shards[std::countr_zero(bits)]);
}

// Holds the locks of a set of shards, taken in ascending order (so that two
// sets never wait for each other in a cycle), when threads share the tables.
class ShardLocks {
 public:
  ShardLocks(State& s, ShardSet set) : state_(s), set_(s.multiple_threads ? set : 0) {
    for_each_shard(state_, set_, [](Shard& shard) { shard.mutex.lock(); });
  }
  ~ShardLocks() {
    for_each_shard(state_, set_, [](Shard& shard) { shard.mutex.unlock(); });
  }
  ShardLocks(const ShardLocks&) = delete;
  ShardLocks& operator=(const ShardLocks&) = delete;

 private:
  State& state_;
  ShardSet set_;
};

// A kept buffer's order, unique among the buffers of all threads without a
// counter they share: the thread's number in the high bits.
std::atomic<std::uint64_t> numbered_threads{0};
constinit thread_local std::uint64_t next_order_of_thread __attribute__((tls_model("initial-exec"))) = 0;

std::uint64_t next_order() {
  if (next_order_of_thread == 0)
    next_order_of_thread = (numbered_threads.fetch_add(1, std::memory_order_relaxed) + 1) << 40;
  return next_order_of_thread++;
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

const char* verb(BufferUse use) { return use == BufferUse::Write ? "writes" : "reads"; }

void report_overlap(const Span& span, BufferUse use, FunctionId function, const PendingBuffer& earlier) {
  const std::uintptr_t low = std::max(span.low, earlier.low);
  const std::uintptr_t high = std::min(span.high, earlier.high);
  const char* name = function_info(function).name;
  const char* earlier_name = function_info(earlier.function).name;
  report::Finding finding;
  finding.check = report::Check::MemoryOverlap;
  finding.summary = {fmt::format("{} {} {} bytes at {:#x} that {}, still pending, {}.", name, verb(use), high - low,
                                 low, earlier_name, verb(earlier.use)),
                     "MPI owns the buffer of a pending operation until the call that completes it returns; "
                     "another operation may use the same bytes only if both only read them."};
  const auto bytes = [](const Span& s) { return fmt::format("{} bytes at {:#x}", s.high - s.low, s.low); };
  finding.parties.push_back({{world_rank()}, fmt::format("{} them", verb(use)),
                             fmt::format("{} ({})", name, bytes(span)), {}});
  finding.parties.push_back({{world_rank()}, fmt::format("started earlier, {} them", verb(earlier.use)),
                             fmt::format("{} ({})", earlier_name, bytes({earlier.low, earlier.high})),
                             call_site_stack(earlier.call_site)});
  finding.key = fmt::format("overlap {} {}", earlier_name, earlier.call_site);
  report(std::move(finding), /*own_stack=*/true);
}

// The first pending buffer of the shard that conflicts with `span` used as
// `use`, under the shard's lock.
const PendingBuffer* conflicting(const Shard& shard, const Span& span, BufferUse use) {
  if (const PendingBuffer* write = shard.writes.first_overlapping(span.low, span.high)) return write;
  if (use == BufferUse::Read) return nullptr;
  return shard.reads.first_overlapping(span.low, span.high);
}

PendingSpans& table_of(Shard& shard, BufferUse use) { return use == BufferUse::Write ? shard.writes : shard.reads; }

// Compares the buffer with the pending ones and reports the first conflict;
// with `kept`, the buffer stays pending until released.
void compare(TakenBuffer* kept, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
             FunctionId function, const void* call_site) {
  const std::optional<Span> span = span_of(buffer, count, type);
  if (!span) return;
  State& s = state();
  const ShardSet shards = shards_of(*span);
  const std::uint64_t order = kept ? next_order() : 0;
  // Copied out only when found, to report after the locks (the table may
  // move it): an optional assigned every call is written narrow and read
  // back wide, which waits (store forwarding fails).
  PendingBuffer conflict;
  bool found = false;
  {
    const ShardLocks locks(s, shards);
    for_each_shard(s, shards, [&](Shard& shard) {
      if (!found)
        if (const PendingBuffer* earlier = conflicting(shard, *span, use)) {
          conflict = *earlier;
          found = true;
        }
      if (kept) table_of(shard, use).add(span->low, span->high, use, function, call_site, order);
    });
  }
  if (kept) {
    kept->shards = shards;
    kept->use = use;
    kept->low = span->low;
    kept->order = order;
  }
  if (found) report_overlap(*span, use, function, conflict);
}

}  // namespace

void start_overlaps(bool on, bool multiple_threads) {
  detail::watching_overlaps = on;
  state().multiple_threads = multiple_threads;
}

void buffer_taken(TakenBuffer& taken, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
                  FunctionId function, const void* call_site) {
  compare(&taken, buffer, count, type, use, function, call_site);
}

void buffer_released(TakenBuffer& taken) {
  State& s = state();
  for_each_shard(s, taken.shards, [&](Shard& shard) {
    const LockIfMultiple guard(shard.mutex, s.multiple_threads);
    table_of(shard, taken.use).remove(taken.low, taken.order);
  });
  taken = {};
}

void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function) {
  compare(nullptr, buffer, count, type, use, function, nullptr);
}

}  // namespace mpisentry::checks
