#include "records/call_record.hpp"

#include <cstring>

#include "records/handle_slots.hpp"
#include "records/persistent_collectives.hpp"

#include <algorithm>
#include <cstddef>
#include <thread>

namespace mpisentry {

bool SharedRecord::load(CallRecord& out) const noexcept {
  const std::uint64_t before = sequence_.load(std::memory_order_acquire);
  if (before & 1) return false;
  // Acquire loads, for the same reason as the writer's release stores: the
  // check of the sequence below cannot move before them. A shape or a count
  // torn from its fields is caught by that check (the counts are clamped).
  for_each_used_field(out, shared_record(), [](auto& field, auto& shared) {
    return field = std::atomic_ref(shared).load(std::memory_order_acquire);
  });
  return sequence_.load(std::memory_order_relaxed) == before;
}

std::uint64_t RequestTable::key_of(MPI_Request request) noexcept { return handle_slots::key_of(request); }

MPI_Request RequestTable::handle_of(std::uint64_t key) noexcept {
  MPI_Request request;
  const std::uint64_t bits = key - 1;
  std::memcpy(&request, &bits, sizeof(request));  // the inverse of key_of
  return request;
}

// Fibonacci hashing (one multiply), not the handle's low bits alone: MPICH
// puts a pool index there, but its direct, indirect and built-in handles
// share it (0xac000001, 0xec000001 and 0x6c000001, which every send that
// completed at once is given), so a window of requests filled one dense run
// of slots that each lookup probed along, and a run longer than kProbes
// evicts an active request (lost_active).
std::size_t RequestTable::home_of(std::uint64_t key) noexcept { return handle_slots::home_of<kSlots>(key); }

void RequestTable::remember(MPI_Request request, const CallRecord& started, tallies::CommTallies* tallies) noexcept {
  const std::uint64_t key = key_of(request);
  const std::size_t home = home_of(key);
  const bool active = function_info(started.function).form != Form::Persistent;
  const bool receives = started.shape == CallShape::Receive || started.shape == CallShape::SendReceive;
  const std::uintptr_t summary = reinterpret_cast<std::uintptr_t>(tallies) | (receives ? kReceives : 0);
  const auto fill = [&](Slot& slot) {
    // Inactive while the record is written, so that the monitor never takes
    // the old record for the new start; then counted as filled once more.
    const std::uint64_t filled = (slot.state.load(std::memory_order_relaxed) | kActive) + kFilled - kActive;
    slot.state.store(filled, std::memory_order_release);
    slot.summary.store(summary, std::memory_order_relaxed);
    slot.record.store(started);
    if (active) set_state(slot, filled | kActive);
  };
  for (std::size_t i = 0; i < kProbes; ++i) {
    Slot& slot = slots_[(home + i) % kSlots];
    std::uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0 && concurrent_writers_)
      slot.key.compare_exchange_strong(seen, key, std::memory_order_acq_rel);
    else if (seen == 0)
      slot.key.store(key, std::memory_order_release);
    // MPI reuses a handle only once its request is done, so an entry with the
    // same key is stale and is overwritten.
    if (seen == 0 || seen == key) {
      fill(slot);
      return;
    }
  }
  Slot& evicted = slots_[home];
  if (evicted.state.load(std::memory_order_acquire) & kActive) mark_lost();
  evicted.key.store(key, std::memory_order_release);
  fill(evicted);
}

RequestTable::Slot* RequestTable::slot_of(MPI_Request request) noexcept {
  const std::uint64_t key = key_of(request);
  const std::size_t home = home_of(key);
  for (std::size_t i = 0; i < kProbes; ++i) {
    Slot& slot = slots_[(home + i) % kSlots];
    const std::uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0) return nullptr;
    if (seen == key) return &slot;
  }
  return nullptr;
}

bool RequestTable::find(MPI_Request request, CallRecord& out) const noexcept {
  const Slot* slot = const_cast<RequestTable*>(this)->slot_of(request);
  return slot != nullptr && slot->record.load(out);
}

// Below MPI_THREAD_MULTIPLE one program thread at a time writes a slot's
// state: a plain store. Above, a compare-and-swap keeps another thread's
// new start of the slot.
void RequestTable::set_state(Slot& slot, std::uint64_t state) noexcept {
  if (!concurrent_writers_) {
    slot.state.store(state, std::memory_order_release);
    return;
  }
  std::uint64_t seen = slot.state.load(std::memory_order_relaxed);
  while ((seen | kActive) == (state | kActive) && seen != state &&
         !slot.state.compare_exchange_weak(seen, state, std::memory_order_acq_rel)) {
  }
}

bool RequestTable::activate(MPI_Request request, CallRecord& started, tallies::CommTallies*& tallies) noexcept {
  Slot* slot = slot_of(request);
  if (slot == nullptr || !slot->record.load(started)) return false;
  if (is_persistent_collective(started)) {  // its next start
    started.persistent.start = persistent_collectives::started(started.persistent.id);
    slot->record.store(started);
  }
  // A new start: MPI_Cancel asked of the last one, and its early match, are done with.
  const std::uintptr_t summary = slot->summary.load(std::memory_order_relaxed) & ~(kCancelling | kMatchedEarly);
  slot->summary.store(summary, std::memory_order_relaxed);
  tallies = completed_of(summary).tallies;
  set_state(*slot, slot->state.load(std::memory_order_relaxed) | kActive);
  return true;
}

void RequestTable::cancelling(MPI_Request request) noexcept {
  if (Slot* slot = request == MPI_REQUEST_NULL ? nullptr : slot_of(request))
    slot->summary.store(slot->summary.load(std::memory_order_relaxed) | kCancelling, std::memory_order_release);
}

RequestTable::Completed RequestTable::completed_of(std::uintptr_t summary) noexcept {
  return {(summary & kReceives) != 0 && !(summary & kMatchedEarly), (summary & kCancelling) != 0,
          reinterpret_cast<tallies::CommTallies*>(summary & ~kSummaryBits)};
}

RequestTable::Completed RequestTable::matched_early(MPI_Request request) noexcept {
  Slot* slot = request == MPI_REQUEST_NULL ? nullptr : slot_of(request);
  if (slot == nullptr || !(slot->state.load(std::memory_order_relaxed) & kActive)) return {};
  const std::uintptr_t summary = slot->summary.load(std::memory_order_relaxed);
  if (!(summary & kReceives) || (summary & (kCancelling | kMatchedEarly))) return {};
  // Another thread may ask MPI_Cancel of it meanwhile: that bit must stay.
  return completed_of(slot->summary.fetch_or(kMatchedEarly, std::memory_order_relaxed));
}

RequestTable::Seen RequestTable::see(MPI_Request request) noexcept {
  Slot* slot = request == MPI_REQUEST_NULL ? nullptr : slot_of(request);
  return {slot, slot ? slot->state.load(std::memory_order_acquire) : 0};
}

RequestTable::Completed RequestTable::complete(const Seen& seen) noexcept {
  if (seen.slot == nullptr || !(seen.state & kActive)) return {};
  // Read before the slot can pass to another start.
  const Completed completed = completed_of(seen.slot->summary.load(std::memory_order_acquire));
  if (!concurrent_writers_) {
    // The only writer: the entry is as seen unless this call completed it
    // already (a handle twice in one array, which MPI forbids).
    if (seen.slot->state.load(std::memory_order_relaxed) != seen.state) return {};
    seen.slot->state.store(seen.state & ~kActive, std::memory_order_release);
    return completed;
  }
  std::uint64_t expected = seen.state;
  return seen.slot->state.compare_exchange_strong(expected, seen.state & ~kActive, std::memory_order_acq_rel)
             ? completed
             : Completed{};
}

void RequestTable::release(MPI_Request request) noexcept {
  Slot* slot = request == MPI_REQUEST_NULL ? nullptr : slot_of(request);
  if (slot == nullptr || !(slot->state.load(std::memory_order_acquire) & kActive)) return;
  CallRecord record;
  while (!slot->record.load(record)) std::this_thread::yield();
  set_state(*slot, slot->state.load(std::memory_order_relaxed) & ~kActive);
  // The fields a record's shape stores (for_each_used_field): the others
  // hold what an earlier record left.
  const auto same = [&record](const CallRecord& other) {
    return other.shape == record.shape && other.function == record.function && other.comm_id == record.comm_id &&
           other.peer == record.peer && other.tag == record.tag &&
           (record.shape != CallShape::SendReceive || (other.source == record.source && other.recv_tag == record.recv_tag));
  };
  // Appended in place (a slot claimed by its index, the count published
  // first): a thread in MPI_Request_free runs, so its rank is not judged
  // blocked while the record is written.
  const std::size_t kept = std::min(freed_count_.load(std::memory_order_acquire), kFreedKept);
  CallRecord other;
  for (std::size_t i = 0; i < kept; ++i)
    if (freed_[i].load(other) && same(other)) return;
  const std::size_t index = freed_count_.fetch_add(1, std::memory_order_acq_rel);
  if (index >= kFreedKept) {
    mark_lost();
    return;
  }
  freed_[index].store(record);
}

// Constant-initialized: the wrappers reach it without the guard a function's
// static would cost every start.
constinit RequestTable detail::request_table;

bool is_point_to_point(const CallRecord& op) {
  return op.shape == CallShape::Send || op.shape == CallShape::Receive || op.shape == CallShape::SendReceive;
}

bool is_nonblocking_collective(const CallRecord& op) {
  const Form form = function_info(op.function).form;
  return (op.shape == CallShape::Collective || op.shape == CallShape::Rooted) &&
         (form == Form::Nonblocking || form == Form::Persistent);
}

bool is_persistent_collective(const CallRecord& op) {
  return is_nonblocking_collective(op) && function_info(op.function).form == Form::Persistent;
}

bool state_readable(const CallRecord& started) { return is_point_to_point(started) || is_nonblocking_collective(started); }

}  // namespace mpisentry
