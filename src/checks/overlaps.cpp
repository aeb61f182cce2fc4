#include "checks/overlaps.hpp"

#include <algorithm>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "checks/findings.hpp"
#include "checks/messages.hpp"
#include "checks/signature.hpp"
#include "checks/thread_lock.hpp"

namespace mpisentry::checks {

namespace detail {
bool watching_overlaps = false;
}

namespace {

// The bytes [low, high) of a buffer.
struct Span {
  std::uintptr_t low = 0, high = 0;
};

// Reads apart from writes: a new buffer MPI reads is compared only with the
// writes, so that many sends from one buffer cost no search among each
// other.
struct State {
  bool multiple_threads = false;
  SpinMutex mutex;  // at MPI_THREAD_MULTIPLE: the RMA calls and the requests' shards share the tables
  PendingSpans reads, writes;
};

State& state() {
  static State* const instance = new State;  // never destroyed: wrappers may run during exit
  return *instance;
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

// The first pending buffer that conflicts with `span` used as `use`, under
// the lock.
const PendingBuffer* conflicting(const State& s, const Span& span, BufferUse use) {
  if (const PendingBuffer* write = s.writes.first_overlapping(span.low, span.high)) return write;
  if (use == BufferUse::Read) return nullptr;
  return s.reads.first_overlapping(span.low, span.high);
}

// Compares the buffer with the pending ones and reports the first conflict;
// with `kept`, the buffer stays pending until released.
void compare(TakenBuffer* kept, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
             FunctionId function, const void* call_site) {
  const std::optional<Span> span = span_of(buffer, count, type);
  if (!span) return;
  State& s = state();
  // Copied out only when found, to report after the lock (the table may
  // move it): an optional assigned every call is written narrow and read
  // back wide, which waits (store forwarding fails).
  PendingBuffer conflict;
  bool found = false;
  {
    const LockIfMultiple guard(s.mutex, s.multiple_threads);
    if (const PendingBuffer* earlier = conflicting(s, *span, use)) {
      conflict = *earlier;
      found = true;
    }
    if (kept) {
      kept->table = use == BufferUse::Write ? &s.writes : &s.reads;
      kept->low = span->low;
      kept->order = kept->table->add(span->low, span->high, use, function, call_site);
    }
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
  if (!taken.table) return;
  State& s = state();
  {
    const LockIfMultiple guard(s.mutex, s.multiple_threads);
    taken.table->remove(taken.low, taken.order);
  }
  taken = {};
}

void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function) {
  compare(nullptr, buffer, count, type, use, function, nullptr);
}

}  // namespace mpisentry::checks
