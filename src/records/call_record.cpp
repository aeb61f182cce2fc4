#include "records/call_record.hpp"

#include "records/handle_slots.hpp"

#include <algorithm>
#include <cstddef>

namespace mpisentry {

bool SharedRecord::load(CallRecord& out) const noexcept {
  const std::uint64_t before = sequence_.load(std::memory_order_acquire);
  if (before & 1) return false;
  std::uint64_t words[kWords];
  // Acquire loads, for the same reason: the check of the sequence below
  // cannot move before them.
  for (std::size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_acquire);
  if (sequence_.load(std::memory_order_relaxed) != before) return false;
  std::memcpy(&out, words, sizeof(CallRecord));
  return true;
}

std::uint64_t RequestTable::key_of(MPI_Request request) noexcept { return handle_slots::key_of(request); }

std::size_t RequestTable::home_of(std::uint64_t key) noexcept { return handle_slots::home_of<kSlots>(key); }

void RequestTable::remember(MPI_Request request, const CallRecord& started) noexcept {
  const std::uint64_t key = key_of(request);
  const std::size_t home = home_of(key);
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
      slot.record.store(started);
      return;
    }
  }
  Slot& evicted = slots_[home];
  evicted.key.store(key, std::memory_order_release);
  evicted.record.store(started);
}

bool RequestTable::find(MPI_Request request, CallRecord& out) const noexcept {
  const std::uint64_t key = key_of(request);
  const std::size_t home = home_of(key);
  for (std::size_t i = 0; i < kProbes; ++i) {
    const Slot& slot = slots_[(home + i) % kSlots];
    const std::uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == 0) return false;
    if (seen == key) return slot.record.load(out);
  }
  return false;
}

// Constant-initialized: the wrappers reach it without the guard a function's
// static would cost every start.
constinit RequestTable detail::request_table;

bool is_point_to_point(const CallRecord& op) {
  return op.shape == CallShape::Send || op.shape == CallShape::Receive || op.shape == CallShape::SendReceive;
}

bool is_nonblocking_collective(const CallRecord& op) {
  return (op.shape == CallShape::Collective || op.shape == CallShape::Rooted) &&
         function_info(op.function).form == Form::Nonblocking;
}

bool state_readable(const CallRecord& started) { return is_point_to_point(started) || is_nonblocking_collective(started); }

}  // namespace mpisentry
