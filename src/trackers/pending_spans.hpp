// The pending buffers of LOCAL:MEMORY:OVERLAP, one table for those MPI reads
// and one for those it writes: a vector sorted by (first byte, order), the
// order a number the caller gives each buffer, unique among the buffers
// kept. A program mostly starts its operations on ascending addresses and
// completes them together (a window of Isends and Irecvs, then a Waitall),
// which a sorted vector serves by appending, where a node-based tree takes
// an allocation and a rebalance per buffer. A released buffer stays as a
// tombstone, reused by a start beside it, until half the table is
// tombstones; a table of tombstones only is emptied. Not thread-safe.
#pragma once

#include <cstdint>
#include <vector>

#include "api/functions.hpp"

namespace mpisentry::checks {

enum class BufferUse : std::uint8_t { Read, Write };

// A pending buffer: the bytes [low, high).
struct PendingBuffer {
  std::uintptr_t low = 0, high = 0;
  BufferUse use = BufferUse::Read;
  FunctionId function = FunctionId::None;
  const void* call_site = nullptr;
};

class PendingSpans {
 public:
  // Keeps the buffer [low, high) (high > low) until removed with `low` and
  // `order`. Its fields come one by one: a PendingBuffer the caller has just
  // written, read back as one, would wait for its stores (a wide load
  // spanning narrow stores is not forwarded).
  void add(std::uintptr_t low, std::uintptr_t high, BufferUse use, FunctionId function, const void* call_site,
           std::uint64_t order);
  void remove(std::uintptr_t low, std::uint64_t order);
  // The first kept buffer that shares a byte with [low, high), or null;
  // valid until the table changes.
  const PendingBuffer* first_overlapping(std::uintptr_t low, std::uintptr_t high) const;

  std::size_t size() const { return slots_.size() - released_; }

 private:
  struct Slot {
    PendingBuffer buffer;
    std::uint64_t order = 0;
    bool released = false;
  };
  // Whether (low, order) sorts before the slot.
  static bool before(std::uintptr_t low, std::uint64_t order, const Slot& s);
  void compact();
  std::vector<Slot> slots_;
  std::size_t released_ = 0;
  // The longest buffer kept since the table was last compacted: how far
  // before a span a kept buffer may start and still reach into it.
  std::uintptr_t longest_ = 0;
};

}  // namespace mpisentry::checks
