// A hash map from 64-bit keys to values that never move, for the checks'
// per-message paths (live requests, message streams), where
// std::unordered_map's node per insert and modulo per lookup cost more than
// the rest of the work: open addressing with linear probing, grown at half
// full, backward-shift deletion; values come from chunks through a free
// list, so a pointer to one stays valid until it is erased. Not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace mpisentry::checks {

template <typename Value>
class StableMap {
 public:
  // Any key but kNoKey.
  static constexpr std::uint64_t kNoKey = 0;

  Value* find(std::uint64_t key) const {
    if (slots_.empty()) return nullptr;
    for (std::size_t i = home(key);; i = (i + 1) & mask()) {
      if (slots_[i].key == key) return slots_[i].value;
      if (slots_[i].key == kNoKey) return nullptr;
    }
  }

  // The value of `key`, added when missing (`added` says which). A value
  // taken from the free list keeps what its last key left in it: the caller
  // sets what it needs.
  Value& get(std::uint64_t key, bool& added) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    std::size_t i = home(key);
    for (; slots_[i].key != kNoKey; i = (i + 1) & mask())
      if (slots_[i].key == key) {
        added = false;
        return *slots_[i].value;
      }
    slots_[i] = {key, take_value()};
    ++used_;
    added = true;
    return *slots_[i].value;
  }

  void erase(std::uint64_t key) {
    if (slots_.empty()) return;
    std::size_t i = home(key);
    for (; slots_[i].key != key; i = (i + 1) & mask())
      if (slots_[i].key == kNoKey) return;
    free_.push_back(slots_[i].value);
    // Backward shift: the slots after it that probed past it move up.
    for (std::size_t j = (i + 1) & mask(); slots_[j].key != kNoKey; j = (j + 1) & mask()) {
      const std::size_t want = home(slots_[j].key);
      if (((j - want) & mask()) >= ((j - i) & mask())) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = {};
    --used_;
  }

  template <typename Visit>
  void for_each(Visit&& visit) {
    for (Slot& slot : slots_)
      if (slot.key != kNoKey) visit(slot.key, *slot.value);
  }

 private:
  struct Slot {
    std::uint64_t key = kNoKey;
    Value* value = nullptr;
  };
  std::size_t mask() const { return slots_.size() - 1; }
  std::size_t home(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & mask();  // Fibonacci hashing
  }
  Value* take_value() {
    if (free_.empty()) {
      chunks_.push_back(std::make_unique<Value[]>(kChunk));
      for (std::size_t i = 0; i < kChunk; ++i) free_.push_back(&chunks_.back()[i]);
    }
    Value* value = free_.back();
    free_.pop_back();
    return value;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    for (const Slot& slot : old) {
      if (slot.key == kNoKey) continue;
      std::size_t i = home(slot.key);
      while (slots_[i].key != kNoKey) i = (i + 1) & mask();
      slots_[i] = slot;
    }
  }
  static constexpr std::size_t kChunk = 64;
  std::vector<Slot> slots_;
  std::size_t used_ = 0;
  std::vector<Value*> free_;
  std::vector<std::unique_ptr<Value[]>> chunks_;
};

}  // namespace mpisentry::checks
