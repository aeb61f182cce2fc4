#include "records/persistent_collectives.hpp"

#include <atomic>
#include <deque>
#include <mutex>

#include "records/communicators.hpp"

namespace mpisentry::persistent_collectives {
namespace {

constexpr std::uint64_t kPersistentKind = 0x9E2C0;  // keeps their ids apart from communicators' and windows'
constexpr std::size_t kSlots = 1024;
constexpr std::size_t kFreedKept = 256;

// Open addressing by id; a freed one's slot is marked removed (its count
// moves to `freed_counts`) and taken again by a later init.
constexpr std::uint64_t kRemoved = ~std::uint64_t{0};
struct Slot {
  std::atomic<std::uint64_t> id{0};
  std::atomic<std::uint64_t> starts{0};
};
Slot slots[kSlots];

std::mutex mutex;  // init and free
std::atomic<int> alive{0};
// A member still in the last start must not seem to wait for one that freed it.
std::deque<CollectiveCount> freed_counts;

Slot* find_slot(std::uint64_t id) noexcept {
  for (std::size_t i = 0; i < kSlots; ++i) {
    Slot& slot = slots[(id + i) % kSlots];
    const std::uint64_t seen = slot.id.load(std::memory_order_acquire);
    if (seen == id) return &slot;
    if (seen == 0) return nullptr;
  }
  return nullptr;
}

}  // namespace

std::uint64_t made(MPI_Comm comm) {
  const std::uint64_t id = comms::made_on(comm, kPersistentKind).id;
  const std::lock_guard lock(mutex);
  for (std::size_t i = 0; i < kSlots; ++i) {
    Slot& slot = slots[(id + i) % kSlots];
    const std::uint64_t seen = slot.id.load(std::memory_order_relaxed);
    if (seen != 0 && seen != kRemoved) continue;
    slot.starts.store(0, std::memory_order_relaxed);
    slot.id.store(id, std::memory_order_release);
    alive.fetch_add(1, std::memory_order_relaxed);
    return id;
  }
  return 0;  // the table is full: its waits are read as unknown
}

std::uint64_t started(std::uint64_t id) noexcept {
  Slot* slot = id == 0 ? nullptr : find_slot(id);
  return slot ? slot->starts.fetch_add(1, std::memory_order_relaxed) + 1 : 0;
}

void freed(std::uint64_t id) {
  const std::lock_guard lock(mutex);
  Slot* slot = id == 0 ? nullptr : find_slot(id);
  if (slot == nullptr) return;
  freed_counts.push_back({id, slot->starts.load(std::memory_order_relaxed)});
  if (freed_counts.size() > kFreedKept) freed_counts.pop_front();
  slot->id.store(kRemoved, std::memory_order_release);  // a probe for another id still passes it
  alive.fetch_sub(1, std::memory_order_relaxed);
}

bool any() noexcept { return alive.load(std::memory_order_relaxed) > 0; }

std::vector<CollectiveCount> collective_counts() {
  std::vector<CollectiveCount> counts;
  for (const Slot& slot : slots) {
    const std::uint64_t id = slot.id.load(std::memory_order_acquire);
    const std::uint64_t starts = slot.starts.load(std::memory_order_relaxed);
    if (id != 0 && id != kRemoved && starts > 0) counts.push_back({id, starts});
  }
  const std::lock_guard lock(mutex);
  counts.insert(counts.end(), freed_counts.begin(), freed_counts.end());
  return counts;
}

}  // namespace mpisentry::persistent_collectives
