// LOCAL:MEMORY:OVERLAP: the bytes of a pending operation's buffer are MPI's
// until the call that completes it returns. A second operation may use the
// same bytes only if both only read them (two sends from one buffer, MPI
// 3.0); two receives into them, or a send from bytes a receive is filling,
// are erroneous in every MPI. Pending are the nonblocking and active
// persistent point-to-point operations (taken and released by the request
// checks) and the RMA operations until their window's synchronization
// (checks/rma.hpp); a blocking send or receive is compared with them for the
// length of its call.
//
// Only buffers whose datatype lays its elements out without gaps are
// compared: their span is their bytes. A derived type with gaps may
// interleave with another buffer's bytes legally, and is not claimed.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>

#include "api/functions.hpp"

namespace mpisentry::checks {

enum class BufferUse : std::uint8_t { Read, Write };

namespace detail {
extern bool watching_overlaps;
}

void start_overlaps(bool on);

inline bool watching_overlaps() noexcept { return detail::watching_overlaps; }

// A pending buffer: the bytes [low, high).
struct PendingBuffer {
  std::uintptr_t low = 0, high = 0;
  BufferUse use = BufferUse::Read;
  FunctionId function = FunctionId::None;
  const void* call_site = nullptr;
};
// The pending buffers by their first byte; those MPI reads and those it
// writes in tables of their own.
using PendingBuffers = std::multimap<std::uintptr_t, PendingBuffer>;

// What buffer_taken kept, for its owner to hand back to buffer_released:
// empty when nothing was kept.
struct TakenBuffer {
  PendingBuffers* table = nullptr;
  PendingBuffers::iterator at;
};

// A pending operation takes `count` elements of `type` at `buffer`: compared
// with the buffers pending before it, then pending itself until released.
TakenBuffer buffer_taken(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
                         FunctionId function, const void* call_site);

// The buffer is MPI's no more; `taken` is empty afterwards.
void buffer_released(TakenBuffer& taken);

// A blocking call uses the buffer for the length of its call: compared with
// the pending buffers, not kept.
void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function);

}  // namespace mpisentry::checks
