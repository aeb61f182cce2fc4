#include "trackers/pending_spans.hpp"

#include <algorithm>

namespace mpisentry::checks {

namespace {

// Below this many tombstones a table is not compacted: a few cost less to
// step over than to move the rest.
constexpr std::size_t kMinCompacted = 32;

// How many slots at the end a lookup tries before it searches them all.
constexpr std::size_t kNearEnd = 4;

}  // namespace

bool PendingSpans::before(std::uintptr_t low, std::uint64_t order, const Slot& s) {
  return low < s.buffer.low || (low == s.buffer.low && order < s.order);
}

void PendingSpans::add(std::uintptr_t low, std::uintptr_t high, BufferUse use, FunctionId function,
                       const void* call_site, std::uint64_t order) {
  longest_ = std::max(longest_, high - low);
  // Its place: after every slot of a lower (first byte, order); mostly the
  // end.
  auto at = slots_.end();
  if (!slots_.empty() && before(low, order, slots_.back()))
    at = std::upper_bound(slots_.begin(), slots_.end(), std::pair{low, order},
                          [](const auto& key, const Slot& s) { return before(key.first, key.second, s); });
  // A tombstone on either side of that place keeps the order when reused.
  Slot* slot = nullptr;
  if (at != slots_.begin() && std::prev(at)->released)
    slot = &*std::prev(at);
  else if (at != slots_.end() && at->released)
    slot = &*at;
  else
    slot = &*slots_.emplace(at);
  if (slot->released) --released_;
  slot->buffer.low = low;
  slot->buffer.high = high;
  slot->buffer.use = use;
  slot->buffer.function = function;
  slot->buffer.call_site = call_site;
  slot->order = order;
  slot->released = false;
}

void PendingSpans::remove(std::uintptr_t low, std::uint64_t order) {
  const auto at = std::lower_bound(slots_.begin(), slots_.end(), std::pair{low, order}, [](const Slot& s, const auto& key) {
    return s.buffer.low < key.first || (s.buffer.low == key.first && s.order < key.second);
  });
  if (at == slots_.end() || at->order != order || at->released) return;
  at->released = true;
  ++released_;
  if (released_ == slots_.size() || (released_ >= kMinCompacted && 2 * released_ > slots_.size())) compact();
}

const PendingBuffer* PendingSpans::first_overlapping(std::uintptr_t low, std::uintptr_t high) const {
  const std::uintptr_t from = low > longest_ ? low - longest_ : 0;
  // Starts mostly ascend, so the first slot that may reach the span is
  // mostly among the last few.
  auto first = slots_.begin();
  if (slots_.size() > kNearEnd && slots_[slots_.size() - kNearEnd - 1].buffer.low < from)
    first = slots_.end() - kNearEnd;
  auto at = std::lower_bound(first, slots_.end(), from,
                             [](const Slot& s, std::uintptr_t value) { return s.buffer.low < value; });
  for (; at != slots_.end() && at->buffer.low < high; ++at)
    if (!at->released && at->buffer.high > low) return &at->buffer;
  return nullptr;
}

void PendingSpans::compact() {
  std::erase_if(slots_, [](const Slot& s) { return s.released; });
  released_ = 0;
  longest_ = 0;
  for (const Slot& s : slots_) longest_ = std::max(longest_, s.buffer.high - s.buffer.low);
}

}  // namespace mpisentry::checks
