#include "records/partitioned_requests.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>

#include "records/handle_slots.hpp"

namespace mpisentry::partitioned_requests {
namespace {

constexpr std::size_t kSlots = 1024;

// A request the full table has no slot for is read as an unpartitioned one:
// a send's message counted at its start, its waits read as any send's.
struct Slot {
  std::atomic<std::uint64_t> key{handle_slots::kEmptyKey};
  std::atomic<bool> sends{false};
  std::atomic<int> partitions{0};
  std::atomic<int> readied{0};
  std::atomic<tallies::CommTallies*> tallies{nullptr};
};
Slot slots[kSlots];
std::mutex mutex;  // init and free
std::atomic<int> alive{0};

Slot* find_slot(MPI_Request request) noexcept {
  return request == MPI_REQUEST_NULL ? nullptr : handle_slots::find(slots, handle_slots::key_of(request));
}

}  // namespace

void made(MPI_Request request, int partitions, bool sends) {
  if (request == MPI_REQUEST_NULL) return;
  const std::uint64_t key = handle_slots::key_of(request);
  const std::lock_guard lock(mutex);
  const bool known = handle_slots::find(slots, key) != nullptr;  // freed unseen, and handed out again
  Slot* slot = handle_slots::claim(slots, key);
  if (slot == nullptr) return;
  if (!known) alive.fetch_add(1, std::memory_order_relaxed);
  slot->sends.store(sends, std::memory_order_relaxed);
  slot->partitions.store(partitions, std::memory_order_relaxed);
  slot->readied.store(partitions, std::memory_order_relaxed);  // inactive: nothing left to ready
  slot->tallies.store(nullptr, std::memory_order_relaxed);
  slot->key.store(key, std::memory_order_release);
}

bool any() noexcept { return alive.load(std::memory_order_relaxed) > 0; }

bool is_partitioned(MPI_Request request) noexcept { return any() && find_slot(request) != nullptr; }

int partitions_of(MPI_Request request) noexcept {
  const Slot* slot = any() ? find_slot(request) : nullptr;
  return slot ? slot->partitions.load(std::memory_order_relaxed) : 0;
}

bool started_send(MPI_Request request, tallies::CommTallies* tallies) noexcept {
  Slot* slot = any() ? find_slot(request) : nullptr;
  if (slot == nullptr || !slot->sends.load(std::memory_order_relaxed)) return false;
  slot->tallies.store(tallies, std::memory_order_relaxed);
  slot->readied.store(0, std::memory_order_release);
  return true;
}

Readied readied(MPI_Request request, int count) noexcept {
  Slot* slot = any() ? find_slot(request) : nullptr;
  if (slot == nullptr || !slot->sends.load(std::memory_order_relaxed) || count <= 0) return {};
  const int partitions = slot->partitions.load(std::memory_order_relaxed);
  const int before = slot->readied.fetch_add(count, std::memory_order_acq_rel);
  // Only the call that crosses the count sends the message.
  if (before >= partitions || before + count < partitions) return {};
  return {true, slot->tallies.load(std::memory_order_relaxed)};
}

int unreadied(MPI_Request request) noexcept {
  const Slot* slot = any() ? find_slot(request) : nullptr;
  if (slot == nullptr || !slot->sends.load(std::memory_order_relaxed)) return 0;
  const int left = slot->partitions.load(std::memory_order_relaxed) - slot->readied.load(std::memory_order_acquire);
  return left > 0 ? left : 0;
}

void freed(MPI_Request request) {
  const std::lock_guard lock(mutex);
  if (Slot* slot = find_slot(request)) {
    slot->key.store(handle_slots::kRemovedKey, std::memory_order_release);
    alive.fetch_sub(1, std::memory_order_relaxed);
  }
}

}  // namespace mpisentry::partitioned_requests
