// The buffers MPI owns, for LOCAL:MEMORY:OVERLAP (checks/buffer_overlaps,
// which hears of each conflict): the bytes of a pending operation's buffer
// are MPI's until the call that completes it returns. A second operation may
// use the same bytes only if both only read them (two sends from one buffer,
// MPI 3.0); two receives into them, or a send from bytes a receive is
// filling, are erroneous in every MPI. Pending are the nonblocking and active
// persistent point-to-point operations (taken and released by the request
// checks) and the RMA operations until their window's synchronization
// (checks/rma/rma.hpp); a blocking send or receive is compared with them for the
// length of its call.
//
// Only buffers whose datatype lays its elements out without gaps are
// compared: their span is their bytes. A derived type with gaps may
// interleave with another buffer's bytes legally, and is not claimed.
#pragma once

#include <mpi.h>

#include <cstdint>

#include "api/functions.hpp"
#include "findings/findings.hpp"
#include "trackers/pending_spans.hpp"

namespace mpisentry::checks {

namespace detail {
extern bool watching_overlaps;
}

// checks/lifecycle.def: watching nothing until a listener comes; at
// MPI_THREAD_MULTIPLE the tables take a lock.
void start_owned_buffers(const StartContext& context);

// A buffer an operation hands MPI, [low, high), overlaps the pending buffer
// `earlier`, and not both only read: the pending write that starts lowest,
// else (for a buffer MPI writes) the pending read that does.
struct BufferConflict {
  std::uintptr_t low = 0, high = 0;
  BufferUse use = BufferUse::Read;
  FunctionId function = FunctionId::None;
  PendingBuffer earlier;
};

// From now on the buffers are watched, and `listener` hears of each
// conflict, in the calling thread, after the tables' locks.
void listen_for_buffer_conflicts(void (*listener)(const BufferConflict& conflict));

inline bool watching_overlaps() noexcept { return detail::watching_overlaps; }

// What buffer_taken kept, for its owner to hand back to buffer_released:
// empty (no shards) when nothing was kept.
struct TakenBuffer {
  std::uint16_t shards = 0;  // the tables' shards that keep it, one bit each
  BufferUse use = BufferUse::Read;
  std::uintptr_t low = 0;
  std::uint64_t order = 0;
};

// A pending operation takes `count` elements of `type` at `buffer`: compared
// with the buffers pending before it, then pending itself until released.
// `taken` (empty) is its owner's, written in place: returned and copied, its
// wide load waited for the narrow stores just made (store forwarding fails).
void buffer_taken(TakenBuffer& taken, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
                  FunctionId function, const void* call_site);

// The buffer is MPI's no more; `taken` is empty afterwards.
void buffer_released(TakenBuffer& taken);

// A blocking call uses the buffer for the length of its call: compared with
// the pending buffers, not kept.
void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function);

}  // namespace mpisentry::checks
