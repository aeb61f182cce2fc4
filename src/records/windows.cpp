#include "records/windows.hpp"

#include "records/handle_slots.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <deque>
#include <mutex>

#include "records/communicators.hpp"

namespace mpisentry::windows {
namespace {

using handle_slots::kEmptyKey;
using handle_slots::kRemovedKey;
constexpr std::size_t kSlots = 1024;
constexpr std::size_t kFreedKept = 256;
constexpr std::uint64_t kWindowKind = 0x717D0;  // keeps windows' ids apart from communicators'

// An epoch's group: written and read by program threads only, in the
// order the program's epochs impose (relaxed atomics, for threads that
// open and close an epoch one after the other).
struct Group {
  std::atomic<int> size{0};
  std::atomic<int> ranks[kCopiedRequests];
};

struct Slot {
  std::atomic<std::uint64_t> key{kEmptyKey};
  std::atomic<std::uint64_t> id{0};
  std::atomic<std::uint64_t> comm_id{0};
  std::atomic<std::uint64_t> entered{0};
  std::atomic<int> locks_held{0};  // this rank's passive-target locks on the window
  std::atomic<bool> started{false};  // between MPI_Win_start and MPI_Win_complete
  MPI_Group members = MPI_GROUP_NULL;  // the window's group, to translate the epochs' groups
  Group exposure, access;
};
Slot slots[kSlots];

std::mutex mutex;  // creation and free
std::deque<CollectiveCount> freed_counts;  // a member still in the last fence must not seem to wait for one that freed it

Slot* find_slot(MPI_Win win) {
  return win == MPI_WIN_NULL ? nullptr : handle_slots::find(slots, handle_slots::key_of(win));
}

Group& group_of(Slot& slot, Epoch epoch) { return epoch == Epoch::Exposure ? slot.exposure : slot.access; }

}  // namespace

void created(MPI_Comm comm, MPI_Win win) {
  if (win == MPI_WIN_NULL) return;
  const comms::Made made = comms::made_on(comm, kWindowKind);
  const std::lock_guard lock(mutex);
  const std::uint64_t key = handle_slots::key_of(win);
  Slot* slot = handle_slots::claim(slots, key);
  if (slot == nullptr) return;  // no room: the window stays unknown, its calls wait for nothing readable
  slot->id.store(made.id, std::memory_order_relaxed);
  slot->comm_id.store(made.comm_id, std::memory_order_relaxed);
  slot->entered.store(0, std::memory_order_relaxed);
  slot->locks_held.store(0, std::memory_order_relaxed);
  slot->started.store(false, std::memory_order_relaxed);
  slot->exposure.size.store(0, std::memory_order_relaxed);
  slot->access.size.store(0, std::memory_order_relaxed);
  if (slot->members != MPI_GROUP_NULL) PMPI_Group_free(&slot->members);
  PMPI_Win_get_group(win, &slot->members);
  slot->key.store(key, std::memory_order_release);
}

void freed(MPI_Win win, std::uint64_t id) {
  const std::lock_guard lock(mutex);
  Slot* slot = find_slot(win);
  if (slot == nullptr || slot->id.load(std::memory_order_relaxed) != id) return;
  freed_counts.push_back({id, slot->entered.load(std::memory_order_relaxed)});
  if (freed_counts.size() > kFreedKept) freed_counts.pop_front();
  slot->key.store(kRemovedKey, std::memory_order_release);
  if (slot->members != MPI_GROUP_NULL) PMPI_Group_free(&slot->members);
}

Known find(MPI_Win win) noexcept {
  const Slot* slot = find_slot(win);
  if (slot == nullptr) return {};
  return {slot->id.load(std::memory_order_relaxed), slot->comm_id.load(std::memory_order_relaxed)};
}

std::uint64_t enter_collective(MPI_Win win) noexcept {
  Slot* slot = find_slot(win);
  if (slot == nullptr) return 0;
  // A window's collectives are ordered by the program: one writer at a time.
  const std::uint64_t sequence = slot->entered.load(std::memory_order_relaxed) + 1;
  slot->entered.store(sequence, std::memory_order_relaxed);
  return sequence;
}

void begin_epoch(Epoch epoch, MPI_Win win, MPI_Group group, CallRecord& record) {
  record.window.group_size = 0;
  Slot* slot = find_slot(win);
  if (slot != nullptr && epoch == Epoch::Access) slot->started.store(true, std::memory_order_relaxed);
  // An unknown window or a null group: MPI reports the error, nothing to keep.
  if (slot == nullptr || group == MPI_GROUP_NULL || slot->members == MPI_GROUP_NULL) return;
  int size = 0;
  if (PMPI_Group_size(group, &size) != MPI_SUCCESS || size < 0) return;
  const int copied = std::min(size, kCopiedRequests);
  int members[kCopiedRequests];
  for (int i = 0; i < copied; ++i) members[i] = i;
  if (PMPI_Group_translate_ranks(group, copied, members, slot->members, record.window.group) != MPI_SUCCESS) return;
  record.window.group_size = size;
  Group& kept = group_of(*slot, epoch);
  for (int i = 0; i < copied; ++i) kept.ranks[i].store(record.window.group[i], std::memory_order_relaxed);
  kept.size.store(size, std::memory_order_relaxed);
}

void end_epoch(Epoch epoch, MPI_Win win, CallRecord& record) {
  record.window.group_size = 0;
  Slot* slot = find_slot(win);
  if (slot == nullptr) return;
  if (epoch == Epoch::Access) slot->started.store(false, std::memory_order_relaxed);
  const Group& kept = group_of(*slot, epoch);
  record.window.group_size = kept.size.load(std::memory_order_relaxed);
  for (int i = 0; i < std::min(record.window.group_size, kCopiedRequests); ++i)
    record.window.group[i] = kept.ranks[i].load(std::memory_order_relaxed);
}

void lock_taken(MPI_Win win) noexcept {
  if (Slot* slot = find_slot(win)) slot->locks_held.fetch_add(1, std::memory_order_relaxed);
}

void lock_released(MPI_Win win) noexcept {
  if (Slot* slot = find_slot(win)) slot->locks_held.fetch_sub(1, std::memory_order_relaxed);
}

bool in_lock_or_start_epoch(MPI_Win win) noexcept {
  const Slot* slot = find_slot(win);
  return slot == nullptr || slot->locks_held.load(std::memory_order_relaxed) > 0 ||
         slot->started.load(std::memory_order_relaxed);
}

std::vector<std::uint64_t> locked() {
  std::vector<std::uint64_t> ids;
  for (const Slot& slot : slots) {
    const std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == kEmptyKey || key == kRemovedKey) continue;
    if (slot.locks_held.load(std::memory_order_relaxed) > 0) ids.push_back(slot.id.load(std::memory_order_relaxed));
  }
  return ids;
}

std::vector<CollectiveCount> collective_counts() {
  std::vector<CollectiveCount> counts;
  for (const Slot& slot : slots) {
    const std::uint64_t key = slot.key.load(std::memory_order_acquire);
    if (key == kEmptyKey || key == kRemovedKey) continue;
    const std::uint64_t entered = slot.entered.load(std::memory_order_relaxed);
    if (entered > 0) counts.push_back({slot.id.load(std::memory_order_relaxed), entered});
  }
  const std::lock_guard lock(mutex);
  counts.insert(counts.end(), freed_counts.begin(), freed_counts.end());
  return counts;
}

}  // namespace mpisentry::windows
