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

#include "api/functions.hpp"

namespace mpisentry::checks {

enum class BufferUse : std::uint8_t { Read, Write };

namespace detail {
extern bool watching_overlaps;
}

void start_overlaps(bool on);

inline bool watching_overlaps() noexcept { return detail::watching_overlaps; }

// A pending operation, known as `owner` until buffer_released(owner), takes
// `count` elements of `type` at `buffer`. Compared with the buffers pending
// before it; an owner may take two buffers (an RMA operation's origin and
// result).
void buffer_taken(std::uint64_t owner, const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use,
                  FunctionId function, const void* call_site);

// Every buffer `owner` took is MPI's no more.
void buffer_released(std::uint64_t owner);

// A blocking call uses the buffer for the length of its call: compared with
// the pending buffers, not kept.
void buffer_used(const void* buffer, std::int64_t count, MPI_Datatype type, BufferUse use, FunctionId function);

// Owners of the RMA operations (checks/rma.cpp): above any request's key.
inline constexpr std::uint64_t kRmaOwners = std::uint64_t{1} << 63;

}  // namespace mpisentry::checks
