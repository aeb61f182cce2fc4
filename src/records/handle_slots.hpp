// Fixed open-addressing tables keyed by MPI handles, read by any thread
// without a lock and written under the owner's lock. A slot's `key` is the
// handle's bits + 1 (key_of): kEmptyKey was never used and ends a lookup;
// kRemovedKey was freed, or is being rewritten, and readers skip it.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace mpisentry::handle_slots {

inline constexpr std::uint64_t kEmptyKey = 0;
inline constexpr std::uint64_t kRemovedKey = ~std::uint64_t{0};
inline constexpr std::size_t kProbes = 32;

template <typename Handle>
std::uint64_t key_of(Handle handle) {
  std::uint64_t key = 0;
  static_assert(sizeof(Handle) <= sizeof(key));
  std::memcpy(&key, &handle, sizeof(Handle));
  return key + 1;
}

template <std::size_t kSlots>
std::size_t home_of(std::uint64_t key) {
  static_assert(std::has_single_bit(kSlots));
  return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - std::countr_zero(kSlots)));  // Fibonacci hashing
}

// The slot that holds `key`, or null.
template <typename Slot, std::size_t kSlots>
Slot* find(Slot (&slots)[kSlots], std::uint64_t key) {
  const std::size_t home = home_of<kSlots>(key);
  for (std::size_t i = 0; i < kProbes; ++i) {
    Slot& slot = slots[(home + i) % kSlots];
    const std::uint64_t seen = slot.key.load(std::memory_order_acquire);
    if (seen == key) return &slot;
    if (seen == kEmptyKey) return nullptr;
  }
  return nullptr;
}

// Under the owner's lock: the slot for `key` (its own, an empty or a
// removed one), marked removed so that readers skip it while the caller
// fills it; the caller then stores `key` into it with release order. Null
// when there is no room near the key's home: the handle stays untracked.
template <typename Slot, std::size_t kSlots>
Slot* claim(Slot (&slots)[kSlots], std::uint64_t key) {
  const std::size_t home = home_of<kSlots>(key);
  for (std::size_t i = 0; i < kProbes; ++i) {
    Slot& slot = slots[(home + i) % kSlots];
    const std::uint64_t seen = slot.key.load(std::memory_order_relaxed);
    if (seen != kEmptyKey && seen != kRemovedKey && seen != key) continue;
    slot.key.store(kRemovedKey, std::memory_order_release);
    return &slot;
  }
  return nullptr;
}

}  // namespace mpisentry::handle_slots
